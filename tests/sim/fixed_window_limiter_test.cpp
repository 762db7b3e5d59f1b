#include "smartlb/sim/fixed_window_limiter.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace fixed_window_limiter_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const SteadyTime t0{std::chrono::hours(5)};

TEST(FixedWindowLimiter, RemainingIsTheLimitLessWhatThisWindowTook) {
  FixedWindowLimiter limiter(100, 60s, t0);
  EXPECT_EQ(limiter.capacity(), 100);
  EXPECT_EQ(limiter.remaining(t0), 100);
  limiter.take(40, t0 + 1s);
  EXPECT_EQ(limiter.remaining(t0 + 1s), 60);
  EXPECT_EQ(limiter.remaining(t0 + 59'999ms), 60);  // nothing comes back inside the window
  EXPECT_EQ(limiter.wait_until_fits(60, t0 + 2s), 0ns);
}

TEST(FixedWindowLimiter, EverythingComesBackAtTheNextWindow) {
  FixedWindowLimiter limiter(1'000, 1s, t0);
  limiter.take(1'000, t0 + 999ms);
  EXPECT_EQ(limiter.remaining(t0 + 999ms), 0);
  EXPECT_EQ(limiter.remaining(t0 + 1s), 1'000);
}

TEST(FixedWindowLimiter, WaitIsUntilTheNextWindowStarts) {
  FixedWindowLimiter limiter(100, 60s, t0);
  limiter.take(90, t0);
  EXPECT_EQ(limiter.wait_until_fits(11, t0 + 15s), 45s);
  EXPECT_EQ(limiter.wait_until_fits(10, t0 + 15s), 0ns);
  EXPECT_EQ(limiter.wait_until_fits(11, t0 + 59'999'999'999ns), 1ns);
}

TEST(FixedWindowLimiter, WindowsAreAlignedToTheOriginNotToTheFirstUse) {
  FixedWindowLimiter limiter(10, 10s, t0);
  limiter.take(10, t0 + 9s);
  EXPECT_EQ(limiter.wait_until_fits(1, t0 + 9s), 1s);
  EXPECT_EQ(limiter.remaining(t0 + 10s), 10);
}

TEST(FixedWindowLimiter, AnAmountOverTheLimitWaitsForAFullWindowAndNeverFits) {
  FixedWindowLimiter limiter(50, 60s, t0);
  EXPECT_EQ(limiter.wait_until_fits(51, t0 + 10s), 50s);
  EXPECT_LT(limiter.remaining(t0 + 10min), 51);
}

TEST(FixedWindowLimiter, ResetForgetsUsageAndRealignsWindows) {
  FixedWindowLimiter limiter(100, 60s, t0);
  limiter.take(100, t0);
  limiter.reset(t0 + 30s);
  EXPECT_EQ(limiter.remaining(t0 + 30s), 100);
  limiter.take(100, t0 + 30s);
  EXPECT_EQ(limiter.wait_until_fits(1, t0 + 30s), 60s);
}

TEST(FixedWindowLimiter, PerSecondIsTheLimitOverTheWindow) {
  EXPECT_DOUBLE_EQ(FixedWindowLimiter(1'000, 10s, t0).per_second(), 100.0);
  EXPECT_DOUBLE_EQ(FixedWindowLimiter(5, 500ms, t0).per_second(), 10.0);
}

}  // namespace fixed_window_limiter_test
}  // namespace smartlb::sim
