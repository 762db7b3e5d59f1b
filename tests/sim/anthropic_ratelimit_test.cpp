#include "smartlb/sim/anthropic_ratelimit.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace anthropic_ratelimit_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(Rfc3339Utc, FormatsUnixSecondsAsUtc) {
  EXPECT_EQ(rfc3339_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(rfc3339_utc(1'700'000'000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(rfc3339_utc(1'811'652'090), "2027-05-30T04:41:30Z");
}

TEST(QuotaResets, RoundsTheRefillUpToWholeSeconds) {
  const auto resets = quota_resets(QuotaRefill{.tokens = 47'700ms, .requests = 0ns}, 1'700'000'000);
  EXPECT_EQ(resets.tokens_unix, 1'700'000'048);
  EXPECT_EQ(resets.requests_unix, 1'700'000'000);  // already whole
}

TEST(AnthropicRatelimitHeaders, ReportEveryQuantityWithItsReset) {
  HeaderList headers;
  add_anthropic_ratelimit_headers(
      headers,
      QuotaReport{.remaining_requests = 9, .remaining_tokens = 86, .limit_requests = 10, .limit_tokens = 100},
      QuotaResets{.requests_unix = 1'700'000'060, .tokens_unix = 1'700'000'048});
  const HeaderList expected{
      {"anthropic-ratelimit-requests-limit", "10"},
      {"anthropic-ratelimit-requests-remaining", "9"},
      {"anthropic-ratelimit-requests-reset", "2023-11-14T22:14:20Z"},
      {"anthropic-ratelimit-tokens-limit", "100"},
      {"anthropic-ratelimit-tokens-remaining", "86"},
      {"anthropic-ratelimit-tokens-reset", "2023-11-14T22:14:08Z"},
      {"anthropic-ratelimit-input-tokens-limit", "100"},
      {"anthropic-ratelimit-input-tokens-remaining", "86"},
      {"anthropic-ratelimit-input-tokens-reset", "2023-11-14T22:14:08Z"},
      {"anthropic-ratelimit-output-tokens-limit", "100"},
      {"anthropic-ratelimit-output-tokens-remaining", "86"},
      {"anthropic-ratelimit-output-tokens-reset", "2023-11-14T22:14:08Z"},
  };
  EXPECT_EQ(headers, expected);
}

}  // namespace anthropic_ratelimit_test
}  // namespace smartlb::sim
