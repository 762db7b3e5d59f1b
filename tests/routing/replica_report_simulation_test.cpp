// Three replicas routing on the same backends' reports (bench/scale_out.sh MODE=reactive without
// its sockets, report_simulation.hpp): each reads only its own answers, and learns the rest from
// what the others tell it through Redis (routing/report_sharing.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "report_simulation.hpp"

namespace smartlb {
namespace replica_report_simulation_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using namespace report_simulation;

// Three replicas at 3:1:1, 120 % of capacity, 10 s windows, messages between them in 1 ms: at
// most this many upstream 429s per success. Today's figures with a margin. For comparison, one
// replica: sliding 0.008 / 0.018 (answers in 1 / 20 ms), fixed 0.007 / 0.007, bucket 0 / 0; three
// replicas sharing short reports and cooldowns only, not their probes and 429s' moments: sliding
// 0.024 / 0.066, fixed 0.017 / 0.020, bucket 0 / 0.20.
struct Bound {
  LimiterKind model;
  base::Nanos latency;
  double max_429_per_ok;
  double served_below_off;  // percentage points of capacity
};
constexpr Bound kBounds[] = {
    {LimiterKind::Sliding, 1ms, 0.016, 0.1}, {LimiterKind::Sliding, 20ms, 0.055, 0.4},
    {LimiterKind::Fixed, 1ms, 0.008, 0.1},   {LimiterKind::Fixed, 20ms, 0.012, 0.1},
    {LimiterKind::Bucket, 1ms, 0.001, 0.1},  {LimiterKind::Bucket, 20ms, 0.15, 0.1},
};

std::string cell_name(const Bound& b, base::Nanos delay) {
  const auto ms = [](base::Nanos d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  return std::string(sim::limiter_kind_name(b.model)) + ", answers in " + ms(b.latency) +
         " ms, messages in " + ms(delay) + " ms";
}

TEST(ReplicaReportSimulation, ThreeReplicas_NeverWorseThanReportsOff_AndNearlyAsFew429sAsOne) {
  for (const Bound& b : kBounds) {
    const Cell one{b.model, 10s, 120, true, b.latency, b.latency > 1ms};
    const Outcome single = simulate(one);
    // Messages slower than the requests between them (15 ms against one every 12 ms): what they
    // carry may come late, never make it worse than reports off.
    for (const auto delay : {1ms, 15ms}) {
      Cell three = one;
      three.replicas = {3, 1, 1};
      three.share_delay = delay;
      const Outcome shared = simulate(three);
      three.route_on_remaining = false;
      const Outcome off = simulate(three);
      const std::string name = cell_name(b, delay);
      std::printf(
          "%-48s one replica %6.2f %% %.4f | three %6.2f %% %.4f | three, reports off %6.2f %% %.4f\n",
          name.c_str(), single.served_pct, single.upstream_429_per_ok(), shared.served_pct,
          shared.upstream_429_per_ok(), off.served_pct, off.upstream_429_per_ok());
      EXPECT_LE(shared.upstream_429, off.upstream_429 + off.upstream_429 / 100 + 10) << name;
      EXPECT_GE(shared.served_pct, off.served_pct - b.served_below_off) << name;
      if (delay == 1ms) {
        EXPECT_LE(shared.upstream_429_per_ok(), b.max_429_per_ok) << name;
      }
    }
  }
}

// Reports that are half or all -1 (report_routing_simulation_test.cpp): a deployment that reports
// nothing learns the echo of each replica's own sends from its own 429s, so another replica's
// 429 moments are not applied there; where half report, they are. Never worse than reports off.
TEST(ReplicaReportSimulation, ThreeReplicas_ReportsThatAreHalfOrAllMinusOne_NeverWorseThanOff) {
  for (const double unknown : {0.5, 1.0}) {
    for (const auto latency : {1ms, 20ms}) {
      Cell three{LimiterKind::Sliding, 10s, 120, true, latency, latency > 1ms, unknown};
      three.replicas = {3, 1, 1};
      const Outcome shared = simulate(three);
      three.route_on_remaining = false;
      const Outcome off = simulate(three);
      const std::string name =
          "sliding, " + std::to_string(static_cast<int>(unknown * 100)) + " % of reports -1, " +
          "answers in " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(latency).count()) + " ms";
      std::printf("%-48s three %6.2f %% %.4f | three, reports off %6.2f %% %.4f\n", name.c_str(),
                  shared.served_pct, shared.upstream_429_per_ok(), off.served_pct, off.upstream_429_per_ok());
      EXPECT_LE(shared.upstream_429, off.upstream_429 + off.upstream_429 / 100 + 10) << name;
      EXPECT_GE(shared.served_pct, off.served_pct - 0.1) << name;
    }
  }
}

}  // namespace replica_report_simulation_test
}  // namespace smartlb
