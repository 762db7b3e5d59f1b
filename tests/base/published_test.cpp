#include "smartlb/base/published.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace smartlb {
namespace published_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(Published, ReadersKeepTheValueTheyTookWhileANewOneIsPublished) {
  base::Published<int> p(std::make_shared<const int>(1));
  const auto v1 = p.version();
  const auto held = p.current();
  p.publish(std::make_shared<const int>(2));
  EXPECT_EQ(*held, 1) << "a reader's value is not changed under it";
  EXPECT_EQ(*p.current(), 2);
  EXPECT_NE(p.version(), v1) << "the version tells readers to look again";
}

TEST(Published, ConcurrentReadersAlwaysSeeAWholeValue) {
  struct Pair {
    int a, b;
  };
  base::Published<Pair> p(std::make_shared<const Pair>(Pair{0, 0}));
  std::atomic<bool> torn{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      for (int i = 0; i < 20'000; ++i) {
        const auto v = p.current();
        if (v->a != v->b) torn = true;
      }
    });
  for (int i = 1; i <= 2'000; ++i) p.publish(std::make_shared<const Pair>(Pair{i, i}));
  for (auto& t : readers) t.join();
  EXPECT_FALSE(torn);
  EXPECT_EQ(p.current()->a, 2'000);
}

}  // namespace published_test
}  // namespace smartlb
