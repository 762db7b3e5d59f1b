#include "smartlb/routing/sliding_window_budget.hpp"
#include "smartlb/base/random.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace smartlb {
namespace sliding_window_budget_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
constexpr base::MonoNanos kSecond = 1'000'000'000;

TEST(SlidingWindowBudget, AdmitsUpToTheLimit) {
  routing::SlidingWindowBudget b(100, 1s, 10);
  EXPECT_TRUE(b.try_consume(60, 0));
  EXPECT_TRUE(b.try_consume(40, 0));
  EXPECT_FALSE(b.try_consume(1, 0));
  EXPECT_EQ(b.used(0), 100);
}

TEST(SlidingWindowBudget, NeverMoreThanTheLimitInAnyWindowLengthInterval) {
  // Spend steadily for a long time; then check every interval of one window length.
  routing::SlidingWindowBudget b(50, 1s, 8);
  std::vector<std::pair<base::MonoNanos, int>> admitted;
  for (base::MonoNanos t = 0; t < 5 * kSecond; t += kSecond / 100)
    if (b.try_consume(3, t)) admitted.push_back({t, 3});
  for (base::MonoNanos start = 0; start < 4 * kSecond; start += kSecond / 100) {
    int sum = 0;
    for (auto& [t, n] : admitted)
      if (t >= start && t < start + kSecond) sum += n;
    ASSERT_LE(sum, 50) << "interval starting at " << start;
  }
}

TEST(SlidingWindowBudget, RoomComesBackAfterAWindow) {
  routing::SlidingWindowBudget b(10, 1s, 4);
  EXPECT_TRUE(b.try_consume(10, 0));
  EXPECT_FALSE(b.fits(1, kSecond / 2));
  // Conservative: the bucket stays counted until one full window after its bucket ends.
  EXPECT_FALSE(b.fits(1, kSecond));
  EXPECT_TRUE(b.fits(10, kSecond + kSecond / 4));
}

TEST(SlidingWindowBudget, WaitForTellsWhenRoomFrees) {
  routing::SlidingWindowBudget b(10, 1s, 4);  // 250 ms buckets, 5 live
  ASSERT_TRUE(b.try_consume(6, 0));
  ASSERT_TRUE(b.try_consume(4, kSecond / 2));
  EXPECT_EQ(b.wait_for(1, kSecond / 2), base::Nanos(kSecond + kSecond / 4 - kSecond / 2));
  EXPECT_EQ(b.wait_for(7, kSecond / 2), base::Nanos(kSecond / 2 + kSecond + kSecond / 4 - kSecond / 2));
  EXPECT_EQ(b.wait_for(0, kSecond / 2), base::Nanos(0));
}

// The next moment anything comes back: the oldest counted bucket's end (a bucket leaves a whole
// window after its end), not the newest's.
TEST(SlidingWindowBudget, UntilReleaseIsWhenTheOldestCountedBucketLeaves) {
  routing::SlidingWindowBudget b(100, 1s, 10);  // buckets of 100 ms, forgotten 1.1 s after their start
  EXPECT_EQ(b.until_release(0), base::Nanos(0)) << "nothing counted";
  b.consume(10, kSecond / 10 * 2);  // bucket 2
  b.consume(10, kSecond / 10 * 5);  // bucket 5
  EXPECT_EQ(b.until_release(kSecond / 2), base::Nanos(kSecond / 10 * 13 - kSecond / 2));
  EXPECT_EQ(b.until_release(kSecond / 10 * 13), base::Nanos(kSecond / 10 * 16 - kSecond / 10 * 13))
      << "bucket 2 gone: bucket 5 is next";
}

TEST(SlidingWindowBudget, ReleasesSayWhatComesBackWhen) {
  routing::SlidingWindowBudget b(1'000, 1s, 4);  // buckets of 250 ms, forgotten 1.25 s after their start
  b.consume(100, 0);
  b.consume(500, kSecond / 2);
  std::vector<routing::WindowRelease> out;
  b.releases(kSecond * 9 / 10, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].in, 350ms);
  EXPECT_EQ(out[0].amount, 100);
  EXPECT_EQ(out[1].in, 850ms);
  EXPECT_EQ(out[1].amount, 500);
}

TEST(SlidingWindowBudget, DemandShortfallIsWhatTheReleasesDoNotCoverByThen) {
  routing::SlidingWindowBudget b(1'000, 1s, 4);
  b.consume(100, 0);            // back in 350 ms (seen from 0.9 s)
  b.consume(500, kSecond / 2);  // back in 850 ms
  const base::MonoNanos now = kSecond * 9 / 10;
  EXPECT_EQ(b.demand_shortfall(400, 0, now), 240)
      << "400/s for 0.85 s, less the 100 back before then (until the first release alone: 140)";
  EXPECT_EQ(b.demand_shortfall(100, 0, now), 35) << "until the first release; the second covers the rest";
  EXPECT_EQ(b.demand_shortfall(400, 300, now), 300) << "never less than the least asked";
  EXPECT_EQ(b.demand_shortfall(0, 300, now), 0) << "nothing asked: nothing kept";
  EXPECT_EQ(routing::demand_shortfall({}, 100, 0, 1s), 100) << "an empty window: a window's demand";
}

TEST(SlidingWindowBudget, AmountOverTheLimitNeverFits) {
  routing::SlidingWindowBudget b(10, 1s, 4);
  EXPECT_FALSE(b.try_consume(11, 0));
  EXPECT_EQ(b.wait_for(11, 0), base::Nanos(kSecond));
}

}  // namespace sliding_window_budget_test
}  // namespace smartlb

namespace smartlb {
namespace sliding_window_budget_test {

TEST(SlidingWindowBudgetIncremental, MatchesAFullRecountOverALongIrregularRun) {
  // The incremental advance must forget exactly what a full recount would: compare `used`
  // with the sum of the admitted amounts whose bucket is still live.
  constexpr std::int64_t kWindow = 1'000'000'000;
  routing::SlidingWindowBudget b(1'000'000, base::Nanos(kWindow), 16);
  const std::int64_t bucket = kWindow / 16;
  std::vector<std::pair<base::MonoNanos, std::int64_t>> admitted;
  base::FastRandom rng(3);
  base::MonoNanos t = 5 * kWindow;
  for (int i = 0; i < 5000; ++i) {
    t += static_cast<base::MonoNanos>(rng.below(3 * bucket / 2));  // sometimes skips whole buckets
    if (i % 997 == 0) t += 3 * kWindow;                            // and sometimes whole windows
    const std::int64_t amount = 1 + static_cast<std::int64_t>(rng.below(50));
    if (b.try_consume(amount, t)) admitted.push_back({t, amount});
    std::int64_t live = 0;
    const std::int64_t oldest_live = t / bucket - 16;
    for (auto& [when, n] : admitted)
      if (when / bucket >= oldest_live) live += n;
    ASSERT_EQ(b.used(t), live) << "step " << i;
  }
}

}  // namespace sliding_window_budget_test
}  // namespace smartlb
