// What replicas tell one another about a target whose reports are watched
// (routing/report_sharing.hpp): the probes and 429 moments BackendStates tells its listener, and
// what it makes of another replica's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing_fixture.hpp"
#include "smartlb/routing/target_choice.hpp"

namespace smartlb {
namespace shared_moments_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using Kind = routing::MomentNotice::Kind;
constexpr base::Nanos kFresh = routing::ReportedBudget::kFreshFor;

routing::RateLimitReport remaining(std::int64_t tokens) {
  routing::RateLimitReport r;
  r.remaining_tokens = tokens;
  r.remaining_requests = 1'000;
  return r;
}

struct MomentLog : routing::ReportListener {
  void on_report(const routing::ReportNotice&) override {}
  void on_moment(const routing::MomentNotice& n) override {
    seen.push_back({std::string(n.backend) + "/" + std::string(n.deployment), n.kind, n.at});
  }
  struct Seen {
    std::string target;
    Kind kind;
    base::MonoNanos at;
  };
  std::vector<Seen> seen;
};

struct SharedMoments : RoutingFixture {
  std::optional<routing::TargetChoice> choose(std::int64_t cost) {
    base::ScriptedRandom rng({0});
    return choose_target(priority, *table, *states, {"gpt", {}, cost}, rng);
  }
  std::int64_t ms(base::MonoNanos t) const { return states->to_epoch_ms(t); }
};

TEST_F(SharedMoments, A429sMomentAtAWatchedTarget_IsTold_NothingElsewhere) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  MomentLog log;
  states->set_report_listener(&log);
  fail(1, "gpt", throttled(), 20ms);
  EXPECT_TRUE(log.seen.empty()) << "b's reports are not watched: its cooldown travels on its own";
  states->observe_report(member(0), "gpt", remaining(1'000), clock.now(), {});
  fail(0, "gpt", throttled(), 20ms);
  states->set_report_listener(nullptr);
  ASSERT_EQ(log.seen.size(), 1u);
  EXPECT_EQ(log.seen[0].target, "a/gpt");
  EXPECT_EQ(log.seen[0].kind, Kind::Retry);
  EXPECT_EQ(log.seen[0].at, clock.now() + base::Nanos(20ms).count()) << "when the backend takes one again";
}

TEST_F(SharedMoments, AProbeThisReplicaTakes_IsTold) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  MomentLog log;
  states->set_report_listener(&log);
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {});
  clock.advance(kFresh);
  const auto probe = choose(200);
  states->set_report_listener(nullptr);
  ASSERT_TRUE(probe && probe->probe);
  ASSERT_EQ(log.seen.size(), 1u);
  EXPECT_EQ(log.seen[0].kind, Kind::Probe);
  EXPECT_EQ(log.seen[0].at, clock.now() + kFresh.count()) << "out until its answer is waited for no longer";
}

TEST_F(SharedMoments, AProbeAnotherReplicaTook_IsNotTakenHereToo) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {});
  clock.advance(kFresh);
  EXPECT_FALSE(states->apply_shared_moment("nobody", "gpt", Kind::Probe, ms(clock.now()) + 250))
      << "not a backend here";
  EXPECT_FALSE(states->apply_shared_moment("b", "gpt", Kind::Probe, ms(clock.now()) + 250))
      << "b's reports are not watched here";
  // A clock far ahead: out for kFreshFor at most.
  ASSERT_TRUE(states->apply_shared_moment("a", "gpt", Kind::Probe, ms(clock.now()) + 10'000));
  const auto c = choose(200);
  EXPECT_EQ(c->position, 1u) << "a is being tested elsewhere";
  EXPECT_FALSE(c->probe);
  clock.advance(kFresh);
  EXPECT_TRUE(choose(200)->probe) << "its answer is waited for no longer";
}

TEST_F(SharedMoments, A429sRetryAfterElsewhere_IsWhenOneRequestTestsTheTargetHere) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {});
  ASSERT_TRUE(states->apply_shared_moment("a", "gpt", Kind::Retry, ms(clock.now()) + 20));
  EXPECT_EQ(choose(200)->position, 1u);
  clock.advance(20ms);
  const auto c = choose(200);
  EXPECT_EQ(c->position, 0u) << "the backend said 20 ms, not the 250 ms a fresh report holds";
  EXPECT_TRUE(c->probe);
}

TEST_F(SharedMoments, ADeploymentThatReportsNothing_LearnsOnlyFromItsOwn429s) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->observe_report(member(0), "gpt", {}, clock.now(), {}, /*taken=*/false);  // a 429 without a report
  ASSERT_TRUE(states->reported_budget_low()) << "its sends are counted from now on";
  EXPECT_FALSE(states->apply_shared_moment("a", "gpt", Kind::Retry, ms(clock.now()) + 20))
      << "another replica's 429 moment is the echo of sends this one does not know";
}

}  // namespace shared_moments_test
}  // namespace smartlb
