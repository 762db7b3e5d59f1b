#include "smartlb/admin/traffic_history.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace traffic_history_test {  // named, not anonymous: tests/CMakeLists.txt

telemetry::MetricsSnapshot totals(std::uint64_t requests, std::uint64_t throttled, std::uint64_t failovers,
                                  std::vector<std::uint64_t> served, double served_seconds) {
  telemetry::MetricsSnapshot m;
  m.counters[telemetry::CounterKey{telemetry::CounterKind::Requests, 0, 0, 200}] = requests - throttled;
  m.counters[telemetry::CounterKey{telemetry::CounterKind::Requests, telemetry::Metrics::kNoBackend, 0,
                                   429}] = throttled;
  m.counters[telemetry::CounterKey{telemetry::CounterKind::ClientThrottled, telemetry::Metrics::kNoBackend, 0,
                                   0}] = throttled;
  m.counters[telemetry::CounterKey{telemetry::CounterKind::Failovers, 0, 0, 1}] = failovers;
  std::uint64_t count = 0;
  for (const auto s : served) {
    telemetry::BackendMetrics b;
    b.served = s;
    m.backends.push_back(b);
    count += s;
  }
  m.backends[0].duration.count = count;
  m.backends[0].duration.sum = served_seconds;
  return m;
}

TEST(TrafficHistory, EachSampleIsWhatChangedSinceThePreviousRead) {
  admin::TrafficHistory h;
  h.add(totals(100, 0, 0, {60, 40}, 10), 1000);  // the baseline: no sample
  EXPECT_TRUE(h.samples().empty());
  h.add(totals(300, 20, 5, {150, 130}, 28), 1010);
  ASSERT_EQ(h.samples().size(), 1u);
  const admin::TrafficSample& s = h.samples().back();
  EXPECT_EQ(s.requests, 200u);
  EXPECT_EQ(s.throttled, 20u);
  EXPECT_EQ(s.failovers, 5u);
  EXPECT_DOUBLE_EQ(s.latency_ms, 100.0);  // 18 s over 180 served
  EXPECT_EQ(s.served, (std::vector<std::uint64_t>{90, 90}));
  const auto j = h.to_json(10, {"east", "west"});
  EXPECT_EQ(j["interval_seconds"], 10);
  EXPECT_EQ(j["samples"][0]["requests_per_s"], 20.0);
  EXPECT_EQ(j["samples"][0]["throttled_per_s"], 2.0);
  EXPECT_EQ(j["samples"][0]["served"], nlohmann::json({{"east", 90}, {"west", 90}}));
}

TEST(TrafficHistory, KeepsOnlyTheLastSamples) {
  admin::TrafficHistory h(3);
  for (int i = 0; i <= 5; ++i) h.add(totals(10 * (i + 1), 0, 0, {1u + i}, 0), 1000 + i);
  ASSERT_EQ(h.samples().size(), 3u);
  EXPECT_EQ(h.samples().front().unix_time, 1003);
  EXPECT_EQ(h.samples().back().latency_ms, 0);
}

}  // namespace traffic_history_test
}  // namespace smartlb
