#include "smartlb/sim/token_bucket_limiter.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace token_bucket_limiter_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const SteadyTime t0{std::chrono::hours(5)};

TEST(TokenBucketLimiter, CapacityIsTheBurstWorthOfRefill) {
  EXPECT_EQ(TokenBucketLimiter::capacity_for(1'000, 10s, 1s), 100);
  EXPECT_EQ(TokenBucketLimiter::capacity_for(1'000, 10s, 2'500ms), 250);
  EXPECT_EQ(TokenBucketLimiter::capacity_for(1'000, 10s, 10s), 1'000);
  EXPECT_EQ(TokenBucketLimiter::capacity_for(1, 60s, 1s), 1);  // rounds down, but never below 1
  EXPECT_EQ(TokenBucketLimiter::capacity_for(0, 60s, 1s), 0);
  EXPECT_EQ(TokenBucketLimiter::capacity_for(1'440'000'000'000'000, 86'400s, 86'400s), 1'440'000'000'000'000);
}

TEST(TokenBucketLimiter, StartsFull) {
  TokenBucketLimiter bucket(1'000, 10s, 1s, t0);  // 100 per second, holds 100
  EXPECT_EQ(bucket.capacity(), 100);
  EXPECT_EQ(bucket.remaining(t0), 100);
  EXPECT_DOUBLE_EQ(bucket.per_second(), 100.0);
}

TEST(TokenBucketLimiter, RefillsContinuouslyUpToTheCapacity) {
  TokenBucketLimiter bucket(1'000, 10s, 1s, t0);
  bucket.take(100, t0);
  EXPECT_EQ(bucket.remaining(t0), 0);
  EXPECT_EQ(bucket.remaining(t0 + 250ms), 25);
  EXPECT_EQ(bucket.remaining(t0 + 255ms), 25);  // 25.5: whole tokens only
  EXPECT_EQ(bucket.remaining(t0 + 260ms), 26);
  EXPECT_EQ(bucket.remaining(t0 + 1s), 100);
  EXPECT_EQ(bucket.remaining(t0 + 5s), 100);  // never above the capacity
}

TEST(TokenBucketLimiter, WaitIsUntilTheBucketHoldsTheAmount) {
  TokenBucketLimiter bucket(1'000, 10s, 1s, t0);
  bucket.take(100, t0);
  EXPECT_EQ(bucket.wait_until_fits(40, t0 + 250ms), 150ms);
  EXPECT_EQ(bucket.wait_until_fits(25, t0 + 250ms), 0ns);
  EXPECT_EQ(bucket.wait_until_fits(101, t0 + 250ms), 750ms);  // never fits: until full
}

TEST(TokenBucketLimiter, WaitRoundsUpToTheNanosecond) {
  TokenBucketLimiter bucket(3, 1s, 1s, t0);  // 3 per second
  bucket.take(3, t0);
  EXPECT_EQ(bucket.wait_until_fits(1, t0), 333'333'334ns);
  EXPECT_EQ(bucket.remaining(t0 + 333'333'333ns), 0);
  EXPECT_EQ(bucket.remaining(t0 + 333'333'334ns), 1);
}

TEST(TokenBucketLimiter, ManyReadsDoNotDriftTheLevel) {
  TokenBucketLimiter bucket(7, 3s, 3s, t0);  // 7 per 3 s, holds 7
  bucket.take(7, t0);
  for (int ms = 1; ms <= 3'000; ++ms) {
    ASSERT_EQ(bucket.remaining(t0 + std::chrono::milliseconds(ms)), 7 * ms / 3'000) << ms;
  }
}

TEST(TokenBucketLimiter, ResetRefillsAtOnce) {
  TokenBucketLimiter bucket(1'000, 10s, 1s, t0);
  bucket.take(100, t0);
  bucket.reset(t0 + 1ms);
  EXPECT_EQ(bucket.remaining(t0 + 1ms), 100);
  bucket.take(100, t0 + 1ms);
  EXPECT_EQ(bucket.remaining(t0 + 101ms), 10);
}

TEST(TokenBucketLimiter, ZeroLimitAdmitsNothing) {
  TokenBucketLimiter bucket(0, 60s, 1s, t0);
  EXPECT_EQ(bucket.capacity(), 0);
  EXPECT_EQ(bucket.remaining(t0 + 1h), 0);
}

}  // namespace token_bucket_limiter_test
}  // namespace smartlb::sim
