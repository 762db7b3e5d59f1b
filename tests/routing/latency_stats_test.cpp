// Latency per output token per (backend, deployment), over a sliding lookback in 10 s buckets.
#include "smartlb/routing/latency_stats.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace smartlb {
namespace latency_stats_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct LatencyStatsTest : ::testing::Test {
  base::ManualClock clock;  // starts at 1000 s: on a bucket boundary
  routing::LatencyStats stats;
  static constexpr routing::BackendId kA{0}, kB{1};

  void record(base::Nanos latency, std::int64_t tokens, routing::BackendId id = kA,
              std::string_view dep = "gpt") {
    stats.record(id, dep, clock.now(), latency, tokens);
  }
  routing::LatencyReading read(base::Nanos lookback, routing::BackendId id = kA,
                               std::string_view dep = "gpt") {
    return stats.read(id, dep, clock.now(), lookback);
  }
};

TEST_F(LatencyStatsTest, NoSamplesReadsZero) {
  const routing::LatencyReading r = read(5min);
  EXPECT_EQ(r.samples, 0u);
  EXPECT_EQ(r.ms_per_token, 0);
}

TEST_F(LatencyStatsTest, MeanOfLatencyPerOutputToken) {
  record(1000ms, 100);  // 10 ms/token
  record(300ms, 10);    // 30 ms/token
  clock.advance(25s);
  record(200ms, 10);  // 20 ms/token, in a later bucket
  const routing::LatencyReading r = read(5min);
  EXPECT_EQ(r.samples, 3u);
  EXPECT_DOUBLE_EQ(r.ms_per_token, 20);
}

TEST_F(LatencyStatsTest, NoOrNegativeTokensCountAsOne) {
  record(40ms, 0);
  record(60ms, -5);
  const routing::LatencyReading r = read(1min);
  EXPECT_EQ(r.samples, 2u);
  EXPECT_DOUBLE_EQ(r.ms_per_token, 50);
}

TEST_F(LatencyStatsTest, NegativeLatencyCountsAsZero) {
  record(-10ms, 1);
  EXPECT_DOUBLE_EQ(read(1min).ms_per_token, 0);
  EXPECT_EQ(read(1min).samples, 1u);
}

TEST_F(LatencyStatsTest, TargetsAreSeparate) {
  record(10ms, 1, kA, "gpt");
  record(20ms, 1, kB, "gpt");
  record(30ms, 1, kA, "other");
  EXPECT_DOUBLE_EQ(read(1min, kA, "gpt").ms_per_token, 10);
  EXPECT_DOUBLE_EQ(read(1min, kB, "gpt").ms_per_token, 20);
  EXPECT_DOUBLE_EQ(read(1min, kA, "other").ms_per_token, 30);
  EXPECT_EQ(read(1min, kB, "other").samples, 0u);
  EXPECT_EQ(stats.keys(), 3u);
}

TEST_F(LatencyStatsTest, LookbackBoundaryIsTheBucketOfNowMinusLookback) {
  record(10ms, 1);  // at 1000 s, bucket [1000 s, 1010 s)
  clock.advance(5min);
  EXPECT_EQ(read(5min).samples, 1u) << "now - lookback falls on the sample's bucket";
  clock.advance(9s);
  EXPECT_EQ(read(5min).samples, 1u) << "still overlapping that bucket: up to 10 s older samples count";
  clock.advance(1s);
  EXPECT_EQ(read(5min).samples, 0u) << "the window starts in the next bucket";
  EXPECT_EQ(read(6min).samples, 1u) << "a longer lookback still sees it";
}

TEST_F(LatencyStatsTest, WindowSlidesSampleBySample) {
  record(10ms, 1);
  clock.advance(1min);
  record(30ms, 1);
  EXPECT_EQ(read(2min).samples, 2u);
  EXPECT_DOUBLE_EQ(read(2min).ms_per_token, 20);
  clock.advance(1min + 10s);  // the first sample's bucket leaves a 2-minute window
  EXPECT_EQ(read(2min).samples, 1u);
  EXPECT_DOUBLE_EQ(read(2min).ms_per_token, 30);
  clock.advance(1min);
  EXPECT_EQ(read(2min).samples, 0u);
}

TEST_F(LatencyStatsTest, ZeroLookbackReadsTheCurrentBucket) {
  clock.advance(3s);
  record(10ms, 1);
  EXPECT_EQ(read(0s).samples, 1u);
  clock.advance(7s);
  EXPECT_EQ(read(0s).samples, 0u);
}

TEST_F(LatencyStatsTest, LookbackIsClampedToAnHour) {
  record(10ms, 1);
  clock.advance(60min);
  EXPECT_EQ(read(60min).samples, 1u);
  EXPECT_EQ(read(24h).samples, 1u) << "the same as an hour";
  clock.advance(10s);
  EXPECT_EQ(read(24h).samples, 0u) << "nothing older than an hour is kept";
}

TEST_F(LatencyStatsTest, ABucketReusedAfterAnHourForgetsItsOldSamples) {
  record(10ms, 1);
  // The same ring slot, an hour and a bucket later.
  clock.advance(routing::LatencyStats::kBucket * routing::LatencyStats::kSlots);
  record(50ms, 1);
  EXPECT_EQ(read(60min).samples, 1u);
  EXPECT_DOUBLE_EQ(read(60min).ms_per_token, 50);
}

TEST_F(LatencyStatsTest, ABucketIsReadOnlyForItsOwnTime) {
  // A sample an hour and a bucket ahead lands in the ring slot of the current bucket; reading
  // the current bucket must not take it for a current sample.
  stats.record(
      kA, "gpt",
      clock.now() + base::Nanos(routing::LatencyStats::kBucket * routing::LatencyStats::kSlots).count(), 10ms,
      1);
  EXPECT_EQ(read(0s).samples, 0u);
}

TEST(LatencyStatsBound, NewTargetsPastTheBoundAreIgnored) {
  routing::LatencyStats stats(2);
  const base::MonoNanos now = 1'000'000'000'000;
  stats.record({0}, "a", now, 10ms, 1);
  stats.record({0}, "b", now, 10ms, 1);
  stats.record({0}, "c", now, 10ms, 1);
  stats.record({0}, "a", now, 30ms, 1);
  EXPECT_EQ(stats.keys(), 2u);
  EXPECT_EQ(stats.read({0}, "c", now, 1min).samples, 0u);
  EXPECT_EQ(stats.read({0}, "a", now, 1min).samples, 2u) << "known targets keep recording";
}

TEST(LatencyStatsThreads, ConcurrentRecordsAllCount) {
  routing::LatencyStats stats;
  const base::MonoNanos now = 1'000'000'000'000;
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        stats.record({static_cast<std::uint32_t>(i % 3)}, t % 2 ? "x" : "y", now, 1ms, 1);
        (void)stats.read({0}, "x", now, 1min);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::uint32_t total = 0;
  for (std::uint32_t id = 0; id < 3; ++id) {
    for (const char* dep : {"x", "y"}) total += stats.read({id}, dep, now, 1min).samples;
  }
  EXPECT_EQ(total, std::uint32_t{kThreads * kEach});
}

}  // namespace latency_stats_test
}  // namespace smartlb
