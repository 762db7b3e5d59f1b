// Latency-based routing: the measured candidates within a margin of the fastest, plus every
// warming-up one, drawn uniformly.
#include "smartlb/routing/selectors/latency_selector.hpp"

#include <gtest/gtest.h>

#include <set>

#include "routing_fixture.hpp"

namespace smartlb {
namespace latency_selector_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct LatencyPool : RoutingFixture {
  routing::LatencyStats stats;
  routing::LatencySelector latency{stats, 5min, 10.0};

  // `n` samples of `ms` milliseconds per token for member i (one token each).
  void measure(std::size_t i, double ms, int n = 3, std::string_view dep = "gpt") {
    for (int k = 0; k < n; ++k)
      stats.record(member(i).id, dep, clock.now(), base::Nanos(static_cast<std::int64_t>(ms * 1e6)), 1);
  }
  std::optional<std::size_t> pick_latency(std::uint64_t draw, const routing::TriedSet& tried = {},
                                          const routing::LatencySelector* selector = nullptr) {
    base::ScriptedRandom rng({draw});
    return (selector ? *selector : latency).pick(*table, *states, {"gpt", tried, 0}, rng);
  }
  // Every member some draw reaches (draws 0..size-1 cover every eligible candidate).
  std::set<std::size_t> reachable(const routing::TriedSet& tried = {}) {
    std::set<std::size_t> out;
    for (std::uint64_t d = 0; d < table->size(); ++d) {
      if (auto p = pick_latency(d, tried)) out.insert(*p);
    }
    return out;
  }
};

TEST_F(LatencyPool, NothingMeasured_EveryCandidateInCandidateOrder) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}, {"c", 1, 50, ""}});
  EXPECT_EQ(pick_latency(0), 0u);
  EXPECT_EQ(pick_latency(1), 2u) << "weights are ignored";
  EXPECT_EQ(pick_latency(2), 1u) << "and so are priorities, past the order of the draw";
}

TEST_F(LatencyPool, ItLearnsFromCompleteAnswersThatTellTheirTokens) {
  make({{"a", 1, 1, ""}});
  const auto answer = [&](unsigned status, bool complete, std::int64_t tokens) {
    latency.observe(routing::Answered{member(0).id, "gpt", status, complete, clock.now(), 100ms, tokens});
  };
  answer(200, true, 10);
  answer(200, false, 10);  // cut short: its time says nothing per token
  answer(500, true, 10);
  answer(200, true, -1);  // a stream without usage
  answer(200, true, 0);
  const routing::LatencyReading r = stats.read(member(0).id, "gpt", clock.now(), 5min);
  EXPECT_EQ(r.samples, 1u);
  EXPECT_DOUBLE_EQ(r.ms_per_token, 10.0);
}

TEST_F(LatencyPool, FastestSetsTheBar_MarginIsInclusive) {
  make({{"fast", 1, 1, ""}, {"inside", 1, 1, ""}, {"outside", 1, 1, ""}, {"slow", 1, 1, ""}});
  measure(0, 10);
  measure(1, 10.99);
  measure(2, 11.01);
  measure(3, 50);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(pick_latency(1), 1u);
}

TEST_F(LatencyPool, ExactlyAtTheBarIsEligible) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
  routing::LatencySelector fifty(stats, 5min, 50.0);
  measure(0, 2);
  measure(1, 3);  // 2 * 1.5, exact in binary
  EXPECT_EQ(pick_latency(1, {}, &fifty), 1u);
  routing::LatencySelector less(stats, 5min, 49.0);
  EXPECT_EQ(pick_latency(1, {}, &less), 0u);
}

TEST_F(LatencyPool, ZeroMarginOnlyTheFastest_NegativeCountsAsZero) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
  measure(0, 5);
  measure(1, 5.5);
  routing::LatencySelector zero(stats, 5min, 0.0), negative(stats, 5min, -50.0);
  for (std::uint64_t d : {0, 1}) {
    EXPECT_EQ(pick_latency(d, {}, &zero), 0u);
    EXPECT_EQ(pick_latency(d, {}, &negative), 0u);
  }
}

TEST_F(LatencyPool, WarmingUpTargetsAreAlwaysEligible) {
  make({{"fast", 1, 1, ""}, {"slow-but-new", 1, 1, ""}, {"slow", 1, 1, ""}, {"unseen", 1, 1, ""}});
  measure(0, 10);
  measure(1, 1000, routing::LatencySelector::kMinSamples - 1);
  measure(2, 1000);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0, 1, 3}));
}

TEST_F(LatencyPool, ThreeSamplesEndTheWarmUp) {
  make({{"fast", 1, 1, ""}, {"slow", 1, 1, ""}});
  measure(0, 10);
  measure(1, 1000, 2);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0, 1}));
  measure(1, 1000, 1);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0}));
}

TEST_F(LatencyPool, TriedTargetIsNeitherPickedNorTheBar) {
  make({{"fastest", 1, 1, ""}, {"b", 1, 1, ""}, {"c", 1, 1, ""}});
  measure(0, 10);
  measure(1, 20);
  measure(2, 21.5);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0}));
  routing::TriedSet tried;
  tried.add(0);
  EXPECT_EQ(reachable(tried), (std::set<std::size_t>{1, 2})) << "the bar is 20 * 1.1 without the tried one";
}

TEST_F(LatencyPool, CoolingTargetIsExcluded) {
  make({{"fastest", 1, 1, ""}, {"b", 1, 1, ""}});
  measure(0, 10);
  measure(1, 100);
  fail(0, "gpt", throttled(), 5s);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{1}));
  clock.advance(5s);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0}));
}

TEST_F(LatencyPool, LowerPriorityGroupsCompeteToo) {
  make({{"primary", 1, 1, ""}, {"backup", 2, 1, ""}});
  measure(0, 50);
  measure(1, 10);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{1}));
}

TEST_F(LatencyPool, SamplesOlderThanTheLookbackAreForgotten) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
  measure(0, 10);
  measure(1, 100);
  clock.advance(5min + 10s);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0, 1})) << "both warming up again";
}

TEST_F(LatencyPool, ReadsTheDeploymentTheMemberServes) {
  make({{"fixed", 1, 1, "prod-4o"}, {"b", 1, 1, ""}});
  measure(0, 100, 3, "gpt");  // not what "fixed" serves
  measure(0, 10, 3, "prod-4o");
  measure(1, 50);
  EXPECT_EQ(reachable(), (std::set<std::size_t>{0}));
}

TEST_F(LatencyPool, NoCandidate_Nothing) {
  make({{"a", 1, 1, ""}});
  routing::TriedSet tried;
  tried.add(0);
  EXPECT_EQ(pick_latency(0, tried), std::nullopt);
}

TEST_F(LatencyPool, ManyCandidatesBeyondTheInlineBuffer) {
  std::vector<routing::PoolMember> members;
  for (int i = 0; i < 100; ++i) members.push_back({"m" + std::to_string(i), 1 + i % 3, 1, ""});
  make(std::move(members));
  for (std::size_t i = 0; i < 100; ++i) measure(i, 100 + 99 - static_cast<double>(i));
  EXPECT_EQ(reachable(), (std::set<std::size_t>{99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89}))
      << "100 ms/token best: up to 110 ms";
}

}  // namespace latency_selector_test
}  // namespace smartlb
