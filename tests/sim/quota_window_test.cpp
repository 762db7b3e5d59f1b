#include "smartlb/sim/quota_window.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace {

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

class QuotaWindowTest : public ::testing::Test {
 protected:
  SteadyTime t0{std::chrono::hours(5)};
};

TEST_F(QuotaWindowTest, AdmitsWhileBothLimitsHoldAndReportsRemaining) {
  QuotaWindow quota({.tokens_per_minute = 100, .requests_per_minute = 3}, 60s, t0);
  const auto first = quota.try_consume(40, t0);
  ASSERT_TRUE(first.admitted());
  EXPECT_EQ(first.state.remaining_tokens, 60);
  EXPECT_EQ(first.state.remaining_requests, 2);
  EXPECT_EQ(first.state.limit_tokens, 100);
  EXPECT_EQ(first.state.limit_requests, 3);
  EXPECT_EQ(first.retry_after, 0ms);
}

TEST_F(QuotaWindowTest, RejectsTokensOverLimitWithoutCharging) {
  QuotaWindow quota({.tokens_per_minute = 100, .requests_per_minute = 10}, 60s, t0);
  ASSERT_TRUE(quota.try_consume(90, t0).admitted());
  const auto rejected = quota.try_consume(11, t0 + 15s);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::TokensExceeded);
  EXPECT_EQ(rejected.retry_after, 45s);
  EXPECT_EQ(rejected.state.remaining_tokens, 10);
  EXPECT_EQ(rejected.state.remaining_requests, 9);  // the rejected request was not charged
  EXPECT_TRUE(quota.try_consume(10, t0 + 15s).admitted());
}

TEST_F(QuotaWindowTest, RejectsRequestsOverLimit) {
  QuotaWindow quota({.tokens_per_minute = 1'000, .requests_per_minute = 2}, 60s, t0);
  ASSERT_TRUE(quota.try_consume(1, t0).admitted());
  ASSERT_TRUE(quota.try_consume(1, t0).admitted());
  const auto rejected = quota.try_consume(1, t0 + 59'999ms);
  EXPECT_EQ(rejected.verdict, QuotaVerdict::RequestsExceeded);
  EXPECT_EQ(rejected.retry_after, 1ms);
}

TEST_F(QuotaWindowTest, NextFixedWindowStartsFresh) {
  QuotaWindow quota({.tokens_per_minute = 60'000, .requests_per_minute = 600}, 1s, t0);
  ASSERT_EQ(quota.token_limit(), 1'000);
  ASSERT_EQ(quota.request_limit(), 10);
  ASSERT_TRUE(quota.try_consume(1'000, t0 + 999ms).admitted());
  EXPECT_FALSE(quota.try_consume(1, t0 + 999ms).admitted());
  const auto next = quota.try_consume(1'000, t0 + 1s);
  EXPECT_TRUE(next.admitted());
  EXPECT_EQ(next.state.remaining_tokens, 0);
  EXPECT_EQ(next.state.resets_in, 1s);
}

TEST_F(QuotaWindowTest, WindowsAreFixedNotSliding) {
  QuotaWindow quota({.tokens_per_minute = 6'000, .requests_per_minute = 600}, 1s, t0);  // 100/s
  ASSERT_TRUE(quota.try_consume(100, t0 + 900ms).admitted());
  // A sliding window would still count the 100 tokens at +900ms; the fixed one has rolled.
  EXPECT_TRUE(quota.try_consume(100, t0 + 1'100ms).admitted());
}

TEST_F(QuotaWindowTest, RetryAfterRoundsUpToWholeMilliseconds) {
  QuotaWindow quota({.tokens_per_minute = 10, .requests_per_minute = 10}, 60s, t0);
  ASSERT_TRUE(quota.try_consume(10, t0).admitted());
  const auto rejected = quota.try_consume(1, t0 + 1500us);
  EXPECT_EQ(rejected.retry_after, 59'999ms);  // 59998.5 ms left -> 59999
}

TEST_F(QuotaWindowTest, CostLargerThanTheWholeWindowIsAlwaysRejected) {
  QuotaWindow quota({.tokens_per_minute = 50, .requests_per_minute = 10}, 60s, t0);
  EXPECT_EQ(quota.try_consume(51, t0).verdict, QuotaVerdict::TokensExceeded);
  EXPECT_EQ(quota.try_consume(51, t0 + 10min).verdict, QuotaVerdict::TokensExceeded);
}

TEST_F(QuotaWindowTest, ZeroLimitRejectsEverything) {
  QuotaWindow quota({.tokens_per_minute = 0, .requests_per_minute = 0}, 60s, t0);
  EXPECT_FALSE(quota.try_consume(1, t0).admitted());
}

TEST_F(QuotaWindowTest, PeekDoesNotCharge) {
  QuotaWindow quota({.tokens_per_minute = 100, .requests_per_minute = 5}, 60s, t0);
  ASSERT_TRUE(quota.try_consume(30, t0).admitted());
  const auto state = quota.peek(t0 + 1s);
  EXPECT_EQ(state.remaining_tokens, 70);
  EXPECT_EQ(state.remaining_requests, 4);
  EXPECT_EQ(state.resets_in, 59s);
  EXPECT_EQ(quota.peek(t0 + 1s).remaining_tokens, 70);
  EXPECT_EQ(quota.peek(t0 + 60s).remaining_tokens, 100);
}

TEST_F(QuotaWindowTest, ResetForgetsUsageAndRealignsWindows) {
  QuotaWindow quota({.tokens_per_minute = 100, .requests_per_minute = 5}, 60s, t0);
  ASSERT_TRUE(quota.try_consume(100, t0).admitted());
  quota.reset(t0 + 30s);
  const auto after = quota.try_consume(100, t0 + 30s);
  EXPECT_TRUE(after.admitted());
  EXPECT_EQ(after.state.resets_in, 60s);
}

}  // namespace
}  // namespace smartlb::sim
