#include "smartlb/sim/deployment_quota.hpp"

#include <optional>

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace deployment_quota_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(ScaleLimitToWindow, ScalesPerMinuteLimitToTheWindow) {
  EXPECT_EQ(scale_limit_to_window(60'000, 1s), 1'000);
  EXPECT_EQ(scale_limit_to_window(60'000, 60s), 60'000);
  EXPECT_EQ(scale_limit_to_window(60'000, 10s), 10'000);
  EXPECT_EQ(scale_limit_to_window(90, 500ms), 1);  // 0.75 rounds down, but never below 1
}

TEST(ScaleLimitToWindow, ZeroLimitStaysZero) { EXPECT_EQ(scale_limit_to_window(0, 60s), 0); }

TEST(ScaleLimitToWindow, LargeLimitsDoNotOverflow) {
  EXPECT_EQ(scale_limit_to_window(1'000'000'000'000, 86'400s), 1'440'000'000'000'000);
}

LimiterSettings model(LimiterKind kind, std::chrono::milliseconds window = 60s,
                      std::optional<std::chrono::milliseconds> rpm_interval = std::nullopt) {
  LimiterSettings settings;
  settings.kind = kind;
  settings.window = window;
  settings.rpm_interval = rpm_interval;
  return settings;
}

LimiterSettings fixed(std::chrono::milliseconds window) { return model(LimiterKind::Fixed, window); }

class DeploymentQuotaTest : public ::testing::Test {
 protected:
  SteadyTime t0{std::chrono::hours(5)};
};

TEST_F(DeploymentQuotaTest, AdmitsWhileBothLimitsHoldAndReportsRemaining) {
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 3}, fixed(60s), t0);
  const auto first = quota.try_consume(40, t0);
  ASSERT_TRUE(first.admitted());
  EXPECT_EQ(first.state.remaining_tokens, 60);
  EXPECT_EQ(first.state.remaining_requests, 2);
  EXPECT_EQ(first.state.limit_tokens, 100);
  EXPECT_EQ(first.state.limit_requests, 3);
  EXPECT_EQ(first.retry_after, 0ms);
}

TEST_F(DeploymentQuotaTest, RejectsTokensOverLimitWithoutCharging) {
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 10}, fixed(60s), t0);
  ASSERT_TRUE(quota.try_consume(90, t0).admitted());
  const auto rejected = quota.try_consume(11, t0 + 15s);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::TokensExceeded);
  EXPECT_EQ(rejected.retry_after, 45s);
  EXPECT_EQ(rejected.state.remaining_tokens, 10);
  EXPECT_EQ(rejected.state.remaining_requests, 9);  // the rejected request was not charged
  EXPECT_TRUE(quota.try_consume(10, t0 + 15s).admitted());
}

TEST_F(DeploymentQuotaTest, RejectsRequestsOverLimit) {
  DeploymentQuota quota({.tokens_per_minute = 1'000, .requests_per_minute = 2}, fixed(60s), t0);
  ASSERT_TRUE(quota.try_consume(1, t0).admitted());
  ASSERT_TRUE(quota.try_consume(1, t0).admitted());
  const auto rejected = quota.try_consume(1, t0 + 59'999ms);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::RequestsExceeded);
  EXPECT_EQ(rejected.retry_after, 1ms);
  EXPECT_EQ(rejected.state.remaining_tokens, 998);  // no tokens charged either
}

TEST_F(DeploymentQuotaTest, FixedWindowsStartFreshAndDoNotSlide) {
  DeploymentQuota quota({.tokens_per_minute = 6'000, .requests_per_minute = 600}, fixed(1s), t0);  // 100/s
  ASSERT_TRUE(quota.try_consume(100, t0 + 900ms).admitted());
  EXPECT_FALSE(quota.try_consume(1, t0 + 999ms).admitted());
  const auto next = quota.try_consume(100, t0 + 1'100ms);
  EXPECT_TRUE(next.admitted());
  EXPECT_EQ(next.state.remaining_tokens, 0);
}

TEST_F(DeploymentQuotaTest, RetryAfterRoundsUpToWholeMilliseconds) {
  DeploymentQuota quota({.tokens_per_minute = 10, .requests_per_minute = 10}, fixed(60s), t0);
  ASSERT_TRUE(quota.try_consume(10, t0).admitted());
  const auto rejected = quota.try_consume(1, t0 + 1500us);
  EXPECT_EQ(rejected.retry_after, 59'999ms);  // 59998.5 ms left -> 59999
}

TEST_F(DeploymentQuotaTest, CostLargerThanTheWholeLimitIsAlwaysRejected) {
  for (const auto kind : {LimiterKind::Fixed, LimiterKind::Sliding, LimiterKind::Bucket}) {
    DeploymentQuota quota({.tokens_per_minute = 50, .requests_per_minute = 10}, model(kind), t0);
    EXPECT_EQ(quota.try_consume(51, t0).verdict, QuotaVerdict::TokensExceeded);
    const auto later = quota.try_consume(51, t0 + 10min);
    EXPECT_EQ(later.verdict, QuotaVerdict::TokensExceeded);
    EXPECT_GE(later.retry_after, 1ms);
  }
}

TEST_F(DeploymentQuotaTest, ZeroLimitRejectsEverythingWithAtLeastOneMillisecond) {
  for (const auto kind : {LimiterKind::Fixed, LimiterKind::Sliding, LimiterKind::Bucket}) {
    DeploymentQuota quota({.tokens_per_minute = 0, .requests_per_minute = 0}, model(kind), t0);
    const auto rejected = quota.try_consume(1, t0);
    EXPECT_FALSE(rejected.admitted());
    EXPECT_GE(rejected.retry_after, 1ms);
  }
}

TEST_F(DeploymentQuotaTest, PeekDoesNotCharge) {
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 5}, fixed(60s), t0);
  ASSERT_TRUE(quota.try_consume(30, t0).admitted());
  const auto state = quota.peek(t0 + 1s);
  EXPECT_EQ(state.remaining_tokens, 70);
  EXPECT_EQ(state.remaining_requests, 4);
  EXPECT_EQ(quota.peek(t0 + 1s).remaining_tokens, 70);
  EXPECT_EQ(quota.peek(t0 + 60s).remaining_tokens, 100);
}

TEST_F(DeploymentQuotaTest, ResetRestartsEveryModelAtNow) {
  for (const auto kind : {LimiterKind::Fixed, LimiterKind::Sliding, LimiterKind::Bucket}) {
    DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 5}, model(kind), t0);
    ASSERT_TRUE(quota.try_consume(quota.peek(t0).remaining_tokens, t0).admitted());
    ASSERT_FALSE(quota.try_consume(1, t0 + 1ms).admitted());
    quota.reset(t0 + 30s);
    EXPECT_TRUE(quota.try_consume(1, t0 + 30s).admitted()) << limiter_kind_name(kind);
  }
}

TEST_F(DeploymentQuotaTest, SlidingWindowRetryAfterIsWhenTheOldestCostHasLeft) {
  // 600 TPM / 60 RPM over a 10 s sliding window: 100 tokens, 10 requests.
  DeploymentQuota quota({.tokens_per_minute = 600, .requests_per_minute = 60},
                        model(LimiterKind::Sliding, 10s), t0);
  ASSERT_TRUE(quota.try_consume(40, t0).admitted());
  ASSERT_TRUE(quota.try_consume(60, t0 + 3s).admitted());
  const auto rejected = quota.try_consume(30, t0 + 5s);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::TokensExceeded);
  EXPECT_EQ(rejected.retry_after, 5s);
  EXPECT_EQ(rejected.state.remaining_requests, 8);
  EXPECT_TRUE(quota.try_consume(30, t0 + 10s).admitted());
}

TEST_F(DeploymentQuotaTest, RequestsUseTheTokensModelByDefault) {
  // 2 requests per 10 s sliding: the first request's slot comes back 10 s after it.
  DeploymentQuota quota({.tokens_per_minute = 60'000, .requests_per_minute = 12},
                        model(LimiterKind::Sliding, 10s), t0);
  ASSERT_TRUE(quota.try_consume(1, t0 + 9s).admitted());
  ASSERT_TRUE(quota.try_consume(1, t0 + 10s).admitted());
  const auto rejected = quota.try_consume(1, t0 + 11s);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::RequestsExceeded);
  EXPECT_EQ(rejected.retry_after, 8s);  // a fixed 10 s window would have admitted it
  EXPECT_EQ(rejected.state.limit_requests, 2);
}

TEST_F(DeploymentQuotaTest, TokenBucketRetryAfterIsUntilItHoldsTheCost) {
  // 300 TPM over a 1 s window: 5 tokens per second, a bucket of 5.
  DeploymentQuota quota({.tokens_per_minute = 300, .requests_per_minute = 600},
                        model(LimiterKind::Bucket, 1s), t0);
  ASSERT_TRUE(quota.try_consume(5, t0).admitted());
  const auto rejected = quota.try_consume(2, t0 + 100ms);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::TokensExceeded);
  EXPECT_EQ(rejected.retry_after, 300ms);
  EXPECT_EQ(rejected.state.limit_tokens, 5);
  EXPECT_EQ(rejected.state.remaining_tokens, 0);
  EXPECT_TRUE(quota.try_consume(2, t0 + 400ms).admitted());
}

TEST_F(DeploymentQuotaTest, TokenBucketRetryAfterRoundsUpToWholeMilliseconds) {
  // 180 TPM: 3 tokens per second; one token takes 333.33 ms.
  DeploymentQuota quota({.tokens_per_minute = 180, .requests_per_minute = 600},
                        model(LimiterKind::Bucket, 1s), t0);
  ASSERT_TRUE(quota.try_consume(3, t0).admitted());
  EXPECT_EQ(quota.try_consume(1, t0).retry_after, 334ms);
}

TEST_F(DeploymentQuotaTest, RpmIntervalLimitsRequestsPerFixedSubInterval) {
  // 600 RPM enforced per 1 s: 10 requests per second, however much of the minute is left.
  DeploymentQuota quota({.tokens_per_minute = 1'000'000, .requests_per_minute = 600},
                        model(LimiterKind::Sliding, 60s, 1s), t0);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(quota.try_consume(1, t0 + 500ms).admitted()) << i;
  const auto rejected = quota.try_consume(1, t0 + 500ms);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::RequestsExceeded);
  EXPECT_EQ(rejected.retry_after, 500ms);
  EXPECT_EQ(rejected.state.limit_requests, 10);
  EXPECT_EQ(rejected.state.remaining_requests, 0);
  EXPECT_EQ(rejected.state.limit_tokens, 1'000'000);
  EXPECT_TRUE(quota.try_consume(1, t0 + 1s).admitted());
}

TEST_F(DeploymentQuotaTest, RpmIntervalAllowsAtLeastOneRequest) {
  // 6 RPM per 1 s would be 0.1 request: one is allowed per interval.
  DeploymentQuota quota({.tokens_per_minute = 1'000, .requests_per_minute = 6},
                        model(LimiterKind::Fixed, 60s, 1s), t0);
  EXPECT_TRUE(quota.try_consume(1, t0).admitted());
  EXPECT_FALSE(quota.try_consume(1, t0 + 999ms).admitted());
  EXPECT_TRUE(quota.try_consume(1, t0 + 1s).admitted());
}

TEST_F(DeploymentQuotaTest, RpmIntervalLeavesTheTokenLimitToTheModel) {
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 600},
                        model(LimiterKind::Fixed, 60s, 10s), t0);
  ASSERT_TRUE(quota.try_consume(100, t0).admitted());
  const auto rejected = quota.try_consume(1, t0 + 20s);  // a new request interval, same token window
  EXPECT_EQ(rejected.verdict, QuotaVerdict::TokensExceeded);
  EXPECT_EQ(rejected.retry_after, 40s);
  EXPECT_EQ(rejected.state.remaining_requests, 100);
}

TEST_F(DeploymentQuotaTest, RetryAfterWaitsForBothLimits) {
  // Requests: 1 per 1 s interval; tokens: 100 per fixed minute. Both are exceeded: the request
  // fits again only when the token window ends.
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 60},
                        model(LimiterKind::Fixed, 60s, 1s), t0);
  ASSERT_TRUE(quota.try_consume(100, t0 + 500ms).admitted());
  const auto rejected = quota.try_consume(1, t0 + 600ms);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::RequestsExceeded);
  EXPECT_EQ(rejected.retry_after, 59'400ms);
}

TEST_F(DeploymentQuotaTest, UntilFullIsZeroWhenNothingIsUsed) {
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 10}, fixed(60s), t0);
  EXPECT_EQ(quota.until_full(t0 + 5s).tokens, 0ns);
  EXPECT_EQ(quota.until_full(t0 + 5s).requests, 0ns);
}

TEST_F(DeploymentQuotaTest, UntilFullOfFixedWindowsIsTheWindowsEnd) {
  DeploymentQuota quota({.tokens_per_minute = 100, .requests_per_minute = 10}, fixed(60s), t0);
  ASSERT_TRUE(quota.try_consume(30, t0 + 12s).admitted());
  const auto refill = quota.until_full(t0 + 12'300ms);
  EXPECT_EQ(refill.tokens, 47'700ms);
  EXPECT_EQ(refill.requests, 47'700ms);
}

TEST_F(DeploymentQuotaTest, UntilFullOfASlidingWindowIsWhenTheNewestCostLeaves) {
  DeploymentQuota quota({.tokens_per_minute = 600, .requests_per_minute = 60},
                        model(LimiterKind::Sliding, 10s), t0);
  ASSERT_TRUE(quota.try_consume(10, t0).admitted());
  ASSERT_TRUE(quota.try_consume(10, t0 + 3s).admitted());
  EXPECT_EQ(quota.until_full(t0 + 4s).tokens, 9s);
}

TEST_F(DeploymentQuotaTest, ABucketsLimitHeaderCanStateTheLimitPerWindowInsteadOfWhatItHolds) {
  // 600 TPM over a 10 s window: 100 tokens per window, refilling 10 a second into a bucket of
  // one second's refill (10).
  LimiterSettings bucket = model(LimiterKind::Bucket, 10s);
  DeploymentQuota holds({.tokens_per_minute = 600, .requests_per_minute = 60}, bucket, t0);
  EXPECT_EQ(holds.peek(t0).limit_tokens, 10);
  EXPECT_EQ(holds.peek(t0).limit_requests, 1);
  bucket.limit_header_per_window = true;
  DeploymentQuota states({.tokens_per_minute = 600, .requests_per_minute = 60}, bucket, t0);
  const auto state = states.peek(t0);
  EXPECT_EQ(state.limit_tokens, 100);
  EXPECT_EQ(state.limit_requests, 10);
  EXPECT_EQ(state.remaining_tokens, 10) << "what it holds is unchanged";
  EXPECT_FALSE(states.try_consume(11, t0).admitted());
}

TEST_F(DeploymentQuotaTest, UntilFullOfABucketIsWhenItHasRefilled) {
  LimiterSettings bucket = model(LimiterKind::Bucket, 1s);
  bucket.burst = 1s;
  DeploymentQuota quota({.tokens_per_minute = 6'000, .requests_per_minute = 600}, bucket, t0);  // 100/s
  ASSERT_TRUE(quota.try_consume(50, t0).admitted());
  const auto refill = quota.until_full(t0);
  EXPECT_EQ(refill.tokens, 500ms);
  EXPECT_EQ(refill.requests, 100ms);  // 1 of 10 per second
}

}  // namespace deployment_quota_test
}  // namespace smartlb::sim
