// The export queue: bounded in spans, a request's spans whole or not at all, oldest first.
#include "smartlb/tracing/span_queue.hpp"

#include <gtest/gtest.h>

namespace smartlb::tracing {
namespace span_queue_test {  // named, not anonymous: tests/CMakeLists.txt

std::vector<Span> spans(std::size_t n, const std::string& name) {
  std::vector<Span> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i].name = name + std::to_string(i);
  return out;
}

TEST(SpanQueue, HoldsAtMostItsCapacityAndARequestWholeOrNotAtAll) {
  SpanQueue q(5);
  EXPECT_TRUE(q.push(spans(2, "a")));
  EXPECT_TRUE(q.push(spans(3, "b")));
  EXPECT_EQ(q.size(), 5u);
  EXPECT_FALSE(q.push(spans(1, "c")));
  EXPECT_EQ(q.size(), 5u);
  const auto first = q.take(4);
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[0].name, "a0");
  EXPECT_EQ(first[3].name, "b1");
  EXPECT_FALSE(q.push(spans(5, "d")));  // 1 + 5 > 5: none of them
  EXPECT_TRUE(q.push(spans(4, "e")));
  const auto rest = q.take(100);
  ASSERT_EQ(rest.size(), 5u);
  EXPECT_EQ(rest[0].name, "b2");
  EXPECT_EQ(rest[4].name, "e3");
  EXPECT_TRUE(q.empty());
}

}  // namespace span_queue_test
}  // namespace smartlb::tracing
