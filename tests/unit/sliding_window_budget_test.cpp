#include "smartlb/sliding_window_budget.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

using namespace std::chrono_literals;
constexpr MonoNanos kSecond = 1'000'000'000;

TEST(SlidingWindowBudget, AdmitsUpToTheLimit) {
  SlidingWindowBudget b(100, 1s, 10);
  EXPECT_TRUE(b.try_consume(60, 0));
  EXPECT_TRUE(b.try_consume(40, 0));
  EXPECT_FALSE(b.try_consume(1, 0));
  EXPECT_EQ(b.used(0), 100);
}

TEST(SlidingWindowBudget, NeverMoreThanTheLimitInAnyWindowLengthInterval) {
  // Spend steadily for a long time; then check every interval of one window length.
  SlidingWindowBudget b(50, 1s, 8);
  std::vector<std::pair<MonoNanos, int>> admitted;
  for (MonoNanos t = 0; t < 5 * kSecond; t += kSecond / 100)
    if (b.try_consume(3, t)) admitted.push_back({t, 3});
  for (MonoNanos start = 0; start < 4 * kSecond; start += kSecond / 100) {
    int sum = 0;
    for (auto& [t, n] : admitted)
      if (t >= start && t < start + kSecond) sum += n;
    ASSERT_LE(sum, 50) << "interval starting at " << start;
  }
}

TEST(SlidingWindowBudget, RoomComesBackAfterAWindow) {
  SlidingWindowBudget b(10, 1s, 4);
  EXPECT_TRUE(b.try_consume(10, 0));
  EXPECT_FALSE(b.fits(1, kSecond / 2));
  // Conservative: the bucket stays counted until one full window after its bucket ends.
  EXPECT_FALSE(b.fits(1, kSecond));
  EXPECT_TRUE(b.fits(10, kSecond + kSecond / 4));
}

TEST(SlidingWindowBudget, WaitForTellsWhenRoomFrees) {
  SlidingWindowBudget b(10, 1s, 4);  // 250 ms buckets, 5 live
  ASSERT_TRUE(b.try_consume(6, 0));
  ASSERT_TRUE(b.try_consume(4, kSecond / 2));
  EXPECT_EQ(b.wait_for(1, kSecond / 2), Nanos(kSecond + kSecond / 4 - kSecond / 2));
  EXPECT_EQ(b.wait_for(7, kSecond / 2), Nanos(kSecond / 2 + kSecond + kSecond / 4 - kSecond / 2));
  EXPECT_EQ(b.wait_for(0, kSecond / 2), Nanos(0));
}

TEST(SlidingWindowBudget, AmountOverTheLimitNeverFits) {
  SlidingWindowBudget b(10, 1s, 4);
  EXPECT_FALSE(b.try_consume(11, 0));
  EXPECT_EQ(b.wait_for(11, 0), Nanos(kSecond));
}

}  // namespace
}  // namespace smartlb
