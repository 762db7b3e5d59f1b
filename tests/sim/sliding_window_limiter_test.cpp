#include "smartlb/sim/sliding_window_limiter.hpp"

#include "smartlb/sim/fixed_window_limiter.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace sliding_window_limiter_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const SteadyTime t0{std::chrono::hours(5)};

TEST(SlidingWindowLimiter, CountsWhatWasAdmittedInTheLastWindow) {
  SlidingWindowLimiter limiter(100, 10s);
  EXPECT_EQ(limiter.capacity(), 100);
  limiter.take(30, t0);
  limiter.take(50, t0 + 4s);
  EXPECT_EQ(limiter.remaining(t0 + 4s), 20);
  EXPECT_EQ(limiter.remaining(t0 + 9'999ms), 20);
  EXPECT_EQ(limiter.remaining(t0 + 10s), 50);  // (now - 10 s, now]: the 30 at t0 has left
  EXPECT_EQ(limiter.remaining(t0 + 13'999ms), 50);
  EXPECT_EQ(limiter.remaining(t0 + 14s), 100);
}

TEST(SlidingWindowLimiter, WaitIsUntilEnoughOfTheOldestHasLeft) {
  SlidingWindowLimiter limiter(100, 10s);
  limiter.take(30, t0);
  limiter.take(50, t0 + 4s);
  limiter.take(20, t0 + 6s);
  const auto now = t0 + 7s;
  EXPECT_EQ(limiter.remaining(now), 0);
  EXPECT_EQ(limiter.wait_until_fits(25, now), 3s);  // the 30 leaves at +10 s
  EXPECT_EQ(limiter.wait_until_fits(30, now), 3s);
  EXPECT_EQ(limiter.wait_until_fits(31, now), 7s);   // and the 50 at +14 s
  EXPECT_EQ(limiter.wait_until_fits(100, now), 9s);  // the 20 at +16 s
  EXPECT_EQ(limiter.wait_until_fits(101, now), 9s);  // never fits: until the window is empty
  EXPECT_EQ(limiter.wait_until_fits(31, t0 + 13'999'999'999ns), 1ns);
}

TEST(SlidingWindowLimiter, AmountsAdmittedTogetherLeaveTogether) {
  SlidingWindowLimiter limiter(10, 1s);
  for (int i = 0; i < 10; ++i) limiter.take(1, t0 + 100ms);
  EXPECT_EQ(limiter.wait_until_fits(1, t0 + 200ms), 900ms);
  EXPECT_EQ(limiter.remaining(t0 + 1'100ms), 10);
}

TEST(SlidingWindowLimiter, DoesNotRefillAtAWindowBoundaryLikeAFixedWindow) {
  SlidingWindowLimiter sliding(100, 1s);
  FixedWindowLimiter fixed(100, 1s, t0);
  sliding.take(100, t0 + 900ms);
  fixed.take(100, t0 + 900ms);
  EXPECT_EQ(fixed.remaining(t0 + 1'100ms), 100);
  EXPECT_EQ(sliding.remaining(t0 + 1'100ms), 0);
  EXPECT_EQ(sliding.wait_until_fits(1, t0 + 1'100ms), 800ms);
  EXPECT_EQ(sliding.remaining(t0 + 1'900ms), 100);
}

TEST(SlidingWindowLimiter, ResetEmptiesTheWindow) {
  SlidingWindowLimiter limiter(100, 60s);
  limiter.take(100, t0);
  limiter.reset(t0 + 1s);
  EXPECT_EQ(limiter.remaining(t0 + 1s), 100);
  EXPECT_EQ(limiter.wait_until_fits(100, t0 + 1s), 0ns);
}

TEST(SlidingWindowLimiter, ZeroLimitAdmitsNothing) {
  SlidingWindowLimiter limiter(0, 60s);
  EXPECT_EQ(limiter.remaining(t0), 0);
  EXPECT_EQ(limiter.wait_until_fits(1, t0), 0ns);  // nothing will ever leave: the caller floors it
}

TEST(SlidingWindowLimiter, PerSecondIsTheLimitOverTheWindow) {
  EXPECT_DOUBLE_EQ(SlidingWindowLimiter(8'333, 10s).per_second(), 833.3);
}

}  // namespace sliding_window_limiter_test
}  // namespace smartlb::sim
