// Routing on the backends' rate-limit reports against the limiters real services use: a fixed
// window, a sliding window and a token bucket, each over 1 s, 10 s and 60 s, none of which
// smartlb is told about (report_simulation.hpp: the goodput benchmark without its sockets).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "report_simulation.hpp"

namespace smartlb {
namespace report_routing_simulation_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using namespace report_simulation;

// Each cell against the same run with report routing off (ROUTE_ON_REMAINING=off, 429s and
// their Retry-After only): no more upstream 429s, about as much served, and at most
// `max_429_per_ok` upstream 429s per success. The bounds are today's figures with a margin, so
// that a change that makes any cell worse fails here (docs/benchmarks.md has the real run).
struct Bound {
  LimiterKind model;
  base::Nanos window;
  double served_below_off;  // percentage points of capacity
  double max_429_per_ok;
};
constexpr Bound kBounds[] = {
    {LimiterKind::Fixed, 1s, 0.3, 0.012},   {LimiterKind::Fixed, 10s, 0.1, 0.01},
    {LimiterKind::Fixed, 60s, 0.1, 0.003},  {LimiterKind::Sliding, 1s, 0.0, 0.045},
    {LimiterKind::Sliding, 10s, 0.4, 0.02}, {LimiterKind::Sliding, 60s, 0.1, 0.013},
    {LimiterKind::Bucket, 1s, 0.1, 0.001},  {LimiterKind::Bucket, 10s, 0.1, 0.001},
    {LimiterKind::Bucket, 60s, 0.1, 0.001},
};

// A cell run as it is and with report routing off; `name` says which, and the figures are printed.
struct AgainstOff {
  Outcome on, off;
};
AgainstOff against_off(Cell cell, const std::string& name) {
  AgainstOff r;
  r.on = simulate(cell);
  cell.route_on_remaining = false;
  r.off = simulate(cell);
  std::printf("%-38s served %6.2f %% (off %6.2f %%), upstream 429s per success %.4f (off %.4f)\n",
              name.c_str(), r.on.served_pct, r.off.served_pct, r.on.upstream_429_per_ok(),
              r.off.upstream_429_per_ok());
  return r;
}

std::string cell_name(const Bound& b, const std::string& what) {
  return std::string(sim::limiter_kind_name(b.model)) + " " + std::to_string(b.window.count() / kSec) +
         " s, " + what;
}

void check_every_cell(base::Nanos latency, bool poisson) {
  for (const Bound& b : kBounds) {
    for (int load : {80, 120}) {
      const std::string cell = cell_name(b, std::to_string(load) + " % load");
      const auto [on, off] = against_off({b.model, b.window, load, true, latency, poisson}, cell);
      EXPECT_LE(on.upstream_429, std::max<std::int64_t>(off.upstream_429, 10))
          << cell << " (a handful is noise)";
      EXPECT_GE(on.served_pct, off.served_pct - b.served_below_off) << cell;
      EXPECT_LE(on.upstream_429_per_ok(), b.max_429_per_ok) << cell;
      if (load == 80 && b.window >= 10s) {
        EXPECT_EQ(on.client_429, 0) << cell << ": every request served";
      }
    }
  }
}

TEST(ReportRoutingSimulation, EvenArrivalsAndQuickAnswers_AsTheGoodputBenchmarkSendsThem) {
  check_every_cell(1ms, false);
}

TEST(ReportRoutingSimulation, PoissonArrivalsAndSlowerAnswers) { check_every_cell(20ms, true); }

// Reports that are all -1 (Azure has sent them): 429s and their Retry-After are all smartlb
// learns from. Against a sliding window it learns the echo of its own sends from the 429s and
// stops sending where the echo says nothing is left; against a token bucket, its refill rate
// (BlindBucket), and sends there only when the bucket holds the request; a fixed window is caught
// being neither, and routing is then as with report routing off. No cell may do worse than off. Where
// half the answers report -1, the other half's reports route, and an answer without one must
// not leave a stale report holding a target back (as reports alone, within the cell's bound);
// against a token bucket, the answers without one keep its report (and its refill) standing.
TEST(ReportRoutingSimulation,
     ReportsThatAreAllOrHalfMinusOne_NeverWorseThanOff_AndFewer429sOnASlidingWindowOrABucket) {
  for (const Bound& b : kBounds) {
    for (const auto latency : {1ms, 20ms}) {
      const std::string answers = "answers in " + std::to_string(latency.count()) + " ms";
      const auto [half, half_off] =
          against_off({b.model, b.window, 120, true, latency, latency > 1ms, /*unknown=*/0.5},
                      cell_name(b, "half -1, " + answers));
      EXPECT_LE(half.upstream_429, half_off.upstream_429 + half_off.upstream_429 / 100 + 10) << "half -1";
      EXPECT_GE(half.served_pct, half_off.served_pct - std::max(0.1, b.served_below_off)) << "half -1";
      // A token bucket's refill, borne out by the reports, predicts the answers that bring none,
      // and a report stands past kMaxFresh while they bear it out (0.02-0.035 when it did not).
      if (b.model == LimiterKind::Bucket) {
        EXPECT_LE(half.upstream_429_per_ok(), 0.01) << "half -1";
      }
      const std::string name = cell_name(b, "all -1, " + answers);
      const auto [on, off] =
          against_off({b.model, b.window, 120, true, latency, latency > 1ms, /*unknown=*/1.0}, name);
      // A few more against a 60 s sliding window, answered in 20 ms: a bucket's rate is learned
      // from its echo before it is caught being no bucket (0.028 against 0.027 per success).
      EXPECT_LE(on.upstream_429, off.upstream_429 + off.upstream_429 * 3 / 100 + 10) << name;
      EXPECT_GE(on.served_pct, off.served_pct - 0.1) << name;
      if (b.model == LimiterKind::Sliding && b.window <= 10s) {
        EXPECT_LT(on.upstream_429_per_ok(), off.upstream_429_per_ok() / 2) << name;
        EXPECT_LE(on.upstream_429_per_ok(), 0.06) << name;
      }
      // The sends before the first 429 teach the window at the first 429s (0.028 when only
      // those after it did).
      if (b.model == LimiterKind::Sliding && b.window == 10s && latency == 1ms) {
        EXPECT_LE(on.upstream_429_per_ok(), 0.024) << name;
      }
      if (b.model == LimiterKind::Bucket) {
        EXPECT_LT(on.upstream_429_per_ok(), off.upstream_429_per_ok() / 8) << name;
        EXPECT_LE(on.upstream_429_per_ok(), 0.045) << name;
      }
    }
  }
}

}  // namespace report_routing_simulation_test
}  // namespace smartlb
