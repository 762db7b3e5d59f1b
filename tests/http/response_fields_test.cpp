// What a proxy reads from a message's fields: Connection's hop-by-hop names, the throttling and
// rate-limit headers in one pass, a plain event stream.
#include "smartlb/http/response_fields.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb {
namespace response_fields_test {  // named, not anonymous: tests/CMakeLists.txt

// Any list of fields with size() and operator[] giving .name and .value.
struct Fields {
  struct Field {
    std::string_view name, value;
  };
  std::vector<Field> list;
  std::size_t size() const { return list.size(); }
  Field operator[](std::size_t i) const { return list[i]; }
};

TEST(ConnectionNames, NamesListedInConnectionAreHopByHopForThatMessage) {
  const Fields f{
      {{"Content-Type", "text/plain"}, {"Connection", "keep-alive, X-Secret"}, {"connection", "Close"}}};
  const http::ConnectionNames named(f);
  EXPECT_TRUE(named.contains("x-secret"));
  EXPECT_TRUE(named.contains("close"));
  EXPECT_FALSE(named.contains("content-type"));
  EXPECT_TRUE(named.is_hop("X-SECRET"));
  EXPECT_TRUE(named.is_hop("Transfer-Encoding")) << "hop-by-hop always";
  EXPECT_FALSE(named.is_hop("Content-Type"));
}

TEST(ConnectionNames, FixedHopByHopNamesAreNotKeptAndStayHopByHop) {
  const Fields f{{{"Connection", "Keep-Alive, TE"}}};
  const http::ConnectionNames named(f);
  EXPECT_FALSE(named.contains("keep-alive")) << "not listed: hop-by-hop anyway";
  EXPECT_TRUE(named.is_hop("keep-alive"));
  EXPECT_TRUE(named.is_hop("te"));
}

TEST(ConnectionNames, MoreThanEightNamesAreAllKept) {
  std::vector<std::string> names;
  std::string value;
  for (int i = 0; i < 12; ++i) value += (i ? ", x-" : "x-") + std::to_string(i);
  const Fields f{{{"Connection", value}}};
  const http::ConnectionNames named(f);
  EXPECT_TRUE(named.contains("x-0"));
  EXPECT_TRUE(named.contains("x-11"));
}

TEST(ThrottleFields, EveryThrottlingHeaderInAnyCase) {
  const Fields f{{{"Retry-After", "5"},
                  {"RETRY-AFTER-MS", "5000"},
                  {"x-ms-retry-after-ms", "4000"},
                  {"X-RateLimit-Reset-Tokens", "6m0s"},
                  {"x-ratelimit-reset-requests", "20ms"},
                  {"x-ratelimit-remaining-tokens", "120"},
                  {"X-Ratelimit-Remaining-Requests", "3"},
                  {"x-ratelimit-limit-tokens", "1000"}}};
  const http::ThrottleHeaders h = http::throttle_fields(f);
  EXPECT_EQ(h.retry_after, "5");
  EXPECT_EQ(h.retry_after_ms, "5000");
  EXPECT_EQ(h.x_ms_retry_after_ms, "4000");
  EXPECT_EQ(h.reset_tokens, "6m0s");
  EXPECT_EQ(h.reset_requests, "20ms");
  EXPECT_EQ(h.remaining_tokens, "120");
  EXPECT_EQ(h.remaining_requests, "3");
}

TEST(ThrottleFields, TheOtherSpellingOfTheTokenResetOnlyWhenTheFirstIsAbsent) {
  EXPECT_EQ(http::throttle_fields(Fields{{{"x-rate-limit-reset-tokens", "2s"}}}).reset_tokens, "2s");
  EXPECT_EQ(
      http::throttle_fields(Fields{{{"x-ratelimit-reset-tokens", "1s"}, {"x-rate-limit-reset-tokens", "2s"}}})
          .reset_tokens,
      "1s");
  EXPECT_TRUE(
      http::throttle_fields(Fields{{{"x-ratelimit-remaining-tokenz", "1"}}}).remaining_tokens.empty());
}

TEST(PlainEventStream, ATextEventStreamWithoutAContentCoding) {
  EXPECT_TRUE(http::is_plain_event_stream("text/event-stream", ""));
  EXPECT_TRUE(http::is_plain_event_stream("Text/Event-Stream ; charset=utf-8", "identity"));
  EXPECT_FALSE(http::is_plain_event_stream("text/event-stream", "gzip"));
  EXPECT_FALSE(http::is_plain_event_stream("application/json", ""));
}

}  // namespace response_fields_test
}  // namespace smartlb
