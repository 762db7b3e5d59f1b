// BackendStates: cooldowns, quota windows and the answer when nothing is left, kept by
// backend identity.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "routing_fixture.hpp"
#include "smartlb/routing/target_choice.hpp"

namespace smartlb {
namespace backend_states_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST_F(PoolFixture, Cooldown_IsPerDeployment) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  fail(0, "gpt-4o", throttled(), 30s);
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("embeddings"), 0u) << "another deployment on the same backend is unaffected";
}

// A backend's first deployment is found without its map (a fast path): every other name still
// finds its own state, names that extend the first one or that it extends included.
TEST_F(PoolFixture, Cooldown_EachDeploymentKeepsItsOwnStateBesideTheFirstOneKept) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  fail(0, "gpt-4o", throttled(), 30s);  // the first state backend 0 keeps
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("gpt-4o-mini"), 0u);
  EXPECT_EQ(pick("gpt"), 0u);
  fail(0, "gpt-4o-mini", throttled(), 30s);
  EXPECT_EQ(pick("gpt-4o-mini"), 1u);
  EXPECT_EQ(pick("gpt"), 0u);
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt").cause, routing::FailureCause::None);
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt-4o").cause, routing::FailureCause::Throttled);
}

TEST_F(PoolFixture, Cooldown_TransportFailureBlocksWholeBackend) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  fail(0, "gpt-4o", refused(), std::nullopt);
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("embeddings"), 1u);
}

TEST_F(PoolFixture, Cooldown_KeyedByEffectiveDeploymentWhenOverridden) {
  // Backend 0 maps every request onto its own deployment, so one quota covers them all.
  make({{"a", 1, 1, "prod-gpt"}, {"b", 2, 1, ""}});
  fail(0, "client-name-1", throttled(), 30s);
  EXPECT_EQ(pick("client-name-2"), 1u);
  EXPECT_EQ(states->deployment_cooldown(member(0), "anything").cause, routing::FailureCause::Throttled);
}

TEST_F(PoolFixture, Cooldown_DeadlinesOnlyGrow) {
  make({{"a", 1, 1, ""}});
  fail(0, "gpt", throttled(), 60s);
  fail(0, "gpt", throttled(), 2s);  // a shorter, later cooldown
  clock.advance(59s);
  EXPECT_FALSE(available(0, "gpt")) << "the shorter cooldown must not cut the deadline";
  fail(0, "gpt", throttled(), 10s);  // now ends at 69s: extends
  clock.advance(2s);
  EXPECT_FALSE(available(0, "gpt"));
  clock.advance(8s);
  EXPECT_TRUE(available(0, "gpt"));
}

TEST_F(PoolFixture, Cooldown_ClampsHints) {
  make({{"a", 1, 1, ""}});
  EXPECT_EQ(fail(0, "gpt", throttled(), 0ms), 100ms);
  EXPECT_EQ(fail(0, "gpt", throttled(), std::chrono::hours(24 * 365)), 300s);
  EXPECT_EQ(fail(0, "gpt", throttled(), std::nullopt), 10s);
}

TEST_F(PoolFixture, Unavailability_ReportsSoonestRecoveryAndThrottling) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}, {"c", 3, 1, ""}});
  fail(0, "gpt", throttled(), 9s);
  fail(1, "gpt", throttled(), 4'500ms);
  fail(2, "gpt", throttled(), 20s);
  clock.advance(1s);
  const auto u = unavailable("gpt");
  EXPECT_EQ(u.retry_after, 3'500ms);
  EXPECT_TRUE(u.throttled);
  EXPECT_FALSE(u.predicted) << "the backends refused: no grace (CAPACITY_GRACE_MS)";
}

TEST_F(PoolFixture, Unavailability_ServerErrorsAreNotReportedAsThrottling) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
  fail(0, "gpt", routing::judge_status(503, true), 2s);
  fail(1, "gpt", refused(), std::nullopt);
  const auto u = unavailable("gpt");
  EXPECT_FALSE(u.throttled);
  EXPECT_EQ(u.retry_after, 2s);
}

TEST_F(PoolFixture, DeploymentCooldowns_ListsStateForStatusPages) {
  make({{"a", 1, 1, ""}});
  fail(0, "z-dep", throttled(), 1s);
  fail(0, "a-dep", throttled(), 2s);
  const auto list = states->deployment_cooldowns(member(0).id);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].first, "a-dep");
  EXPECT_EQ(list[1].first, "z-dep");
}

TEST_F(QuotaPool, QuotaIsPerDeployment) {
  make({{"a", 1, 1, "", 100, 0}});
  ASSERT_TRUE(reserve(0, "gpt", 100));
  base::ScriptedRandom rng({0});
  EXPECT_EQ(pick_with("other", {}, rng, 100), 0u);
  EXPECT_EQ(pick_with("gpt", {}, rng, 1), std::nullopt);
}

TEST_F(QuotaPool, Unavailability_AtQuotaIsThrottlingWithTheTimeUntilItFits) {
  make({{"a", 1, 1, "", 100, 0}});
  ASSERT_TRUE(reserve(0, "gpt", 100));
  const auto u = unavailable("gpt", 10);
  EXPECT_TRUE(u.throttled);
  EXPECT_TRUE(u.predicted) << "only the declared quota says no";
  EXPECT_GT(u.retry_after, 0ms);
  EXPECT_LE(u.retry_after, 1100ms);
  clock.advance(u.retry_after);
  EXPECT_EQ(pick(10), 0u) << "the promised time is when it fits again";
}

// What a refusal's wait may be (clients::capacity_wait's grace) depends on the member back first.
TEST_F(QuotaPool, Unavailability_PredictedOnlyWhereTheFirstBackIsOutByAPrediction) {
  make({{"a", 1, 1, "", 100, 0}, {"b", 1, 1, ""}});
  ASSERT_TRUE(reserve(0, "gpt", 100));
  fail(1, "gpt", throttled(), 20s);
  EXPECT_TRUE(unavailable("gpt", 10).predicted) << "a, at its quota, is back first";
  ASSERT_TRUE(reserve(0, "gpt-4o", 100));
  fail(1, "gpt-4o", throttled(), 200ms);
  const auto u = unavailable("gpt-4o", 10);
  EXPECT_EQ(u.retry_after, 200ms);
  EXPECT_FALSE(u.predicted) << "b, cooling down for its 429, is back first";
}

TEST_F(QuotaPool, UsedTokensCountAgainstTheQuotaEvenPastItsLimit) {
  // A Realtime session's responses: spent at the backend, whatever the window had left.
  make({{"a", 1, 1, "", 100, 0}, {"b", 2, 1, "", 100, 0}});
  states->charge_used(member(0), "gpt", 60);
  EXPECT_EQ(pick(40), 0u);
  EXPECT_EQ(pick(41), 1u) << "60 of a's 100 are used: 41 fit only on b";
  states->charge_used(member(0), "gpt", 500);
  EXPECT_EQ(states->quota_usage(member(0), "gpt").tokens_used, 560);
  EXPECT_EQ(pick(1), 1u);
  clock.advance(3s);  // the fixture's window is 1 s
  EXPECT_EQ(pick(100), 0u) << "forgotten with the window";
}

TEST_F(QuotaPool, UsedTokensWithoutADeclaredQuotaCountNothing) {
  make({{"a", 1, 1, "", 0, 0}});
  states->charge_used(member(0), "gpt", 1'000'000);
  EXPECT_EQ(states->quota_usage(member(0), "gpt").tokens_used, 0);
  EXPECT_EQ(pick(1'000'000), 0u);
}

TEST_F(QuotaPool, BackendsWithoutQuotaAreUnaffected) {
  make({{"a", 1, 1, "", 0, 0}});
  EXPECT_FALSE(table->any_quota());
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(reserve(0, "gpt", 1'000'000));
  EXPECT_EQ(pick(1'000'000), 0u);
}

TEST_F(PoolFixture, ClientChosenDeploymentNamesCannotGrowStateWithoutBound) {
  make({{"a", 1, 1, ""}});
  const routing::Verdict missing = routing::judge_status(404, true);
  for (int i = 0; i < 5000; ++i) fail(0, "name-" + std::to_string(i), missing, std::chrono::seconds(5));
  EXPECT_EQ(states->deployment_cooldowns(member(0).id).size(),
            routing::BackendStates::kMaxDeploymentsPerBackend);
  // Names past the cap share the overflow entry: still cooling, conservatively.
  EXPECT_FALSE(available(0, "name-4999"));
  EXPECT_FALSE(available(0, "never-seen-before"));
  clock.advance(std::chrono::seconds(5));
  EXPECT_TRUE(available(0, "never-seen-before"));
  EXPECT_TRUE(available(0, "name-1")) << "names under the cap keep their own entry";
}

TEST_F(PoolFixture, StateIsKeptByIdentityNotPosition) {
  // Two tables naming the same backends in another order: the state follows the name.
  routing::BackendIds ids;
  const routing::RoutingTable first({{"east", 1, 1, ""}, {"west", 1, 1, ""}}, ids);
  const routing::RoutingTable second({{"north", 1, 1, ""}, {"west", 1, 1, ""}, {"east", 1, 1, ""}}, ids);
  states = std::make_unique<routing::BackendStates>(clock, policy);
  states->track(first);
  states->track(second);
  states->record_failure(first.member(0), "gpt", throttled(), 30s);  // east
  EXPECT_EQ(second.member(2).id, first.member(0).id);
  EXPECT_FALSE(states->available(second.member(2), "gpt")) << "east is still cooling in the new table";
  EXPECT_TRUE(states->available(second.member(1), "gpt"));
  EXPECT_TRUE(states->available(second.member(0), "gpt")) << "a new backend starts fresh";
  EXPECT_EQ(second.member(0).id.value, 2u) << "a new name gets a new id";
}

TEST_F(QuotaPool, ConcurrentReservesNeverOversellAQuota) {
  // Both worker threads reserve from one declared quota at once (the ThreadSanitizer build
  // runs this too): exactly the quota is granted, never more.
  make({{"a", 1, 1, "", 1000, 0}});
  std::atomic<int> granted{0};
  auto worker = [&] {
    for (int i = 0; i < 2000; ++i) {
      if (reserve(0, "gpt", 1)) ++granted;
      (void)available(0, "gpt");
      if (i % 100 == 0) fail(0, "other", throttled(), 1s);
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  EXPECT_EQ(granted.load(), 1000);
}

TEST(BackendIdsTest, ANameKeepsItsIdAndIdsAreNeverReused) {
  routing::BackendIds ids;
  EXPECT_EQ(ids.id_for("a").value, 0u);
  EXPECT_EQ(ids.id_for("b").value, 1u);
  EXPECT_EQ(ids.id_for("a").value, 0u);
  EXPECT_EQ(ids.size(), 2u);
}

TEST(BackendStatesLimits, TrackRefusesMoreIdsThanItCanHold) {
  base::ManualClock clock;
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  EXPECT_NO_THROW(states.track(routing::RoutingTable({{"a", 1, 1, ""}})));
  std::vector<routing::PoolMember> members(routing::BackendStates::kMaxBackends + 1);
  for (std::size_t i = 0; i < members.size(); ++i) members[i].name = "b" + std::to_string(i);
  EXPECT_THROW(states.track(routing::RoutingTable(std::move(members))), std::length_error);
}

// The backends' own reports (x-ratelimit-remaining-*), with no quota declared.
routing::RateLimitReport remaining(std::int64_t tokens, std::int64_t requests = 1'000) {
  routing::RateLimitReport r;
  r.remaining_tokens = tokens;
  r.remaining_requests = requests;
  return r;
}

struct ReportedPool : PoolFixture {
  // What choose_target would do: the selector, or a probe.
  std::optional<routing::TargetChoice> choose(std::int64_t cost, const routing::TriedSet& tried = {}) {
    base::ScriptedRandom rng({0});
    return choose_target(priority, *table, *states, {"gpt", tried, cost}, rng);
  }
};
constexpr base::Nanos kFresh = routing::ReportedBudget::kFreshFor;

TEST_F(ReportedPool, Reported_ALowReportMovesARequestThatDoesNotFitElsewhere) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  EXPECT_FALSE(states->reported_budget_low());
  states->observe_report(member(0), "gpt", remaining(150), clock.now(), {});
  EXPECT_TRUE(states->reported_budget_low()) << "requests are estimated from now on";
  base::ScriptedRandom rng({0});
  EXPECT_EQ(pick_with("gpt", {}, rng, 200), 1u) << "150 tokens left cannot take 200";
  EXPECT_EQ(pick_with("gpt", {}, rng, 100), 0u);
  EXPECT_EQ(pick_with("other", {}, rng, 200), 0u) << "per deployment";
  EXPECT_EQ(states->standing(member(0), "gpt", clock.now(), 200),
            routing::BackendStates::Standing::ReportedShort);
  EXPECT_LE(states->deployment_cooldown(member(0), "gpt").until, clock.now()) << "a skip, not a cooldown";
}

// Records the short reports BackendStates would share with other replicas.
struct ReportLog : routing::ReportListener {
  std::vector<std::string> seen;  // "backend/deployment:remaining tokens"
  void on_report(const routing::ReportNotice& n) override {
    seen.push_back(std::string(n.backend) + "/" + std::string(n.deployment) + ":" +
                   std::to_string(n.report.remaining_tokens.value_or(-1)));
  }
  void on_moment(const routing::MomentNotice&) override {}
};

TEST_F(ReportedPool, Reported_ShortReportsAreToldToWhoeverSharesThem_PlentifulOnesAreNot) {
  make({{"a", 1, 1, ""}});
  ReportLog log;
  states->set_report_listener(&log);
  states->observe_report(member(0), "gpt", remaining(1'000'000), clock.now(), {});
  states->observe_report(member(0), "gpt", remaining(150), clock.now(), {});
  states->set_report_listener(nullptr);
  EXPECT_EQ(log.seen, std::vector<std::string>{"a/gpt:150"});
}

TEST_F(ReportedPool, Reported_AReportAnotherReplicaReadMovesRequestsHereToo) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  const auto now_ms = std::chrono::duration_cast<base::Millis>(clock.wall_now().time_since_epoch()).count();
  EXPECT_FALSE(states->apply_shared_report("nobody", "gpt", remaining(150), now_ms)) << "not a backend here";
  EXPECT_FALSE(states->apply_shared_report("a", "gpt", remaining(150), now_ms - 61'000))
      << "too old to say anything";
  ASSERT_TRUE(states->apply_shared_report("a", "gpt", remaining(150), now_ms + 5'000))
      << "a clock ahead: taken as now";
  EXPECT_TRUE(states->reported_budget_low());
  base::ScriptedRandom rng({0});
  EXPECT_EQ(pick_with("gpt", {}, rng, 200), 1u) << "150 tokens left cannot take 200";
  EXPECT_EQ(states->reported_budget(member(0), "gpt").reported_at, clock.now());
  states->set_route_on_remaining(false);
  EXPECT_FALSE(states->apply_shared_report("a", "gpt", remaining(150), now_ms)) << "reports off: not read";
}

TEST_F(ReportedPool, Reported_PlentifulReportsNeedNoStateAtAll) {
  make({{"a", 1, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(1'000'000), clock.now(), {});
  EXPECT_FALSE(states->reported_budget_low());
  EXPECT_TRUE(states->deployment_cooldowns(member(0).id).empty());
}

TEST_F(ReportedPool, Reported_A429ThatReportsNothing_StartsCountingTheSends_UnlessReportsAreOff) {
  make({{"a", 1, 1, ""}});
  states->set_route_on_remaining(false);
  states->observe_report(member(0), "gpt", {}, clock.now(), {}, /*taken=*/false);
  EXPECT_FALSE(states->reported_budget_low()) << "reports off: a 429 is a cooldown only";
  states->set_route_on_remaining(true);
  states->observe_report(member(0), "gpt", {}, clock.now(), {}, /*taken=*/false);
  EXPECT_TRUE(states->reported_budget_low()) << "its sends are counted, so that its window can be learned";
  EXPECT_EQ(states->charge_reported(member(0), "gpt", 200).own_requests, 1);
  base::ScriptedRandom rng({0});
  EXPECT_EQ(pick_with("gpt", {}, rng, 200), 0u) << "nothing learned yet: nothing held back";
}

TEST_F(ReportedPool, Reported_SendsAreCountedWhileLow) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(500), clock.now(), {});
  base::ScriptedRandom rng({0, 0, 0});
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(pick_with("gpt", {}, rng, 200), 0u);
    states->charge_reported(member(0), "gpt", 200);
  }
  EXPECT_EQ(pick_with("gpt", {}, rng, 200), 1u) << "500 - 400 leaves 100";
  EXPECT_EQ(states->reported_budget(member(0), "gpt").tokens_left, 100);
}

TEST_F(ReportedPool, Reported_EveryBackendFreshlyShort_Answers429UntilOneMayBeTested) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {});
  clock.advance(100ms);
  states->observe_report(member(1), "gpt", remaining(100'000, 0), clock.now(), {});
  EXPECT_EQ(choose(200), std::nullopt) << "both reports are fresh: no room, confirmed";
  const auto u = unavailable("gpt", 200);
  EXPECT_TRUE(u.throttled);
  EXPECT_EQ(u.retry_after, kFresh - 100ms) << "until a's report is no longer fresh";
  clock.advance(kFresh - 100ms);
  const auto probe = choose(200);
  ASSERT_TRUE(probe.has_value()) << "a's report may be stale: one request tests it";
  EXPECT_EQ(probe->position, 0u);
  EXPECT_TRUE(probe->probe);
  EXPECT_EQ(choose(200), std::nullopt) << "one probe at a time: b is still fresh";
  clock.advance(100ms);
  EXPECT_EQ(choose(200)->position, 1u) << "now b may be tested too";
}

TEST_F(ReportedPool, Reported_AStaleShortReportIsProbedBeforeALowerPriorityIsUsed) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {});
  EXPECT_EQ(choose(200)->position, 1u) << "fresh: the request goes to b";
  clock.advance(kFresh);
  const auto c = choose(200);
  EXPECT_EQ(c->position, 0u) << "a, the preferred group, may have room again";
  EXPECT_TRUE(c->probe);
  EXPECT_EQ(choose(200)->position, 1u) << "while a's probe is out, b serves";
}

TEST_F(ReportedPool, Reported_AProbeIsNeverSentWhereAHardLimitHolds) {
  make({{"a", 1, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {});
  fail(0, "gpt", throttled(), 5s);
  clock.advance(kFresh);
  EXPECT_EQ(choose(200), std::nullopt) << "cooling down: no probe";
  EXPECT_EQ(unavailable("gpt", 200).retry_after, 5s - kFresh);
  routing::TriedSet tried;
  tried.add(0);
  clock.advance(5s);
  EXPECT_EQ(choose(200, tried), std::nullopt) << "a request tries each member once";
}

TEST_F(ReportedPool, Reported_ARetryAfterBelowTheCooldownFloor_IsWhenOneRequestTestsIt) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(0), clock.now(), {}, /*taken=*/false);
  EXPECT_EQ(fail(0, "gpt", throttled(), 20ms), 100ms) << "smartlb's floor on cooldowns";
  EXPECT_EQ(choose(200)->position, 1u);
  clock.advance(20ms);
  const auto c = choose(200);
  EXPECT_EQ(c->position, 0u) << "the backend named 20 ms, and its reports are watched";
  EXPECT_TRUE(c->probe);
}

TEST_F(ReportedPool, Reported_WithoutReports_TheCooldownFloorHolds) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  fail(0, "gpt", throttled(), 20ms);
  clock.advance(20ms);
  EXPECT_EQ(choose(200)->position, 1u) << "nothing tells how it stands: 100 ms, as always";
  clock.advance(80ms);
  EXPECT_EQ(choose(200)->position, 0u);
}

TEST_F(ReportedPool, Reported_RouteOnRemainingOff_ReadsNoReport) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  states->set_route_on_remaining(false);
  states->observe_report(member(0), "gpt", remaining(0, 0), clock.now(), {});
  EXPECT_FALSE(states->reported_budget_low());
  EXPECT_EQ(choose(200)->position, 0u);
}

TEST_F(ReportedPool, Reported_ALongQuotaHintCoolsDown) {
  make({{"a", 1, 1, ""}});
  states->observe_report(member(0), "gpt", remaining(100), clock.now(), {});
  fail(0, "gpt", judge_throttle_hint(throttled(), std::chrono::hours(5), 60s), std::chrono::hours(5));
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt").cause, routing::FailureCause::QuotaExhausted);
  clock.advance(300s);  // the clamped cooldown is over
  EXPECT_EQ(states->standing(member(0), "gpt", clock.now(), 200),
            routing::BackendStates::Standing::ReportedShort);
  EXPECT_TRUE(choose(200)->probe) << "the report is long stale: it is tested";
}

// A reload hands the states members with new limits (the same ids): they apply at once, and
// what was used stays counted.
TEST_F(QuotaPool, Reload_ANewLimitAppliesAtOnceAndKeepsWhatWasUsed) {
  routing::PoolMember m{"a", 1, 1, ""};
  m.requests_per_window = 5;
  make({m});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reserve(0, "gpt", 1));
  EXPECT_FALSE(reserve(0, "gpt", 1));
  routing::PoolMember raised = member(0);
  raised.requests_per_window = 8;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(states->reserve(raised, "gpt", 1)) << "request " << 6 + i;
  EXPECT_FALSE(states->reserve(raised, "gpt", 1)) << "8 in the window";
  EXPECT_EQ(states->quota_usage(raised, "gpt").requests_used, 8);
  routing::PoolMember lowered = member(0);
  lowered.requests_per_window = 2;
  EXPECT_FALSE(states->available(lowered, "gpt", clock.now())) << "8 used of 2";
}

TEST_F(QuotaPool, Reload_AQuotaDeclaredWhereThereWasNone_IsEnforced) {
  make({{"a", 1, 1, ""}});
  fail(0, "gpt", throttled(), 100ms);  // the deployment has state already
  clock.advance(1s);
  routing::PoolMember declared = member(0);
  declared.requests_per_window = 2;
  declared.quota_window = std::chrono::seconds(1);
  EXPECT_TRUE(states->reserve(declared, "gpt", 1));
  EXPECT_TRUE(states->reserve(declared, "gpt", 1));
  EXPECT_FALSE(states->reserve(declared, "gpt", 1));
  EXPECT_FALSE(states->available(declared, "gpt", clock.now()));
  routing::PoolMember removed = member(0);  // and taken away again
  EXPECT_TRUE(states->available(removed, "gpt", clock.now()));
  EXPECT_TRUE(states->reserve(removed, "gpt", 1));
}

TEST_F(PoolFixture, Unavailability_EveryMemberWithoutTheDeploymentIsNotFound) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  const routing::Verdict missing = routing::judge_status(404, true);
  fail(0, "gpt", missing, std::nullopt);
  EXPECT_FALSE(unavailable("gpt").not_found) << "b may have it";
  fail(1, "gpt", missing, std::nullopt);
  EXPECT_TRUE(unavailable("gpt").not_found);
  fail(1, "gpt", throttled(), 20s);
  EXPECT_FALSE(unavailable("gpt").not_found) << "b has it, but is rate limited";
  EXPECT_TRUE(unavailable("gpt").throttled);
}

TEST_F(PoolFixture, Unavailability_AnExhaustedQuotaIsThrottling) {
  make({{"a", 1, 1, ""}});
  fail(0, "gpt", judge_throttle_hint(throttled(), std::chrono::hours(5), 60s), std::chrono::hours(5));
  EXPECT_TRUE(unavailable("gpt").throttled);
}

}  // namespace backend_states_test
}  // namespace smartlb

namespace smartlb {
namespace backend_states_test {

// Deployments on two backends that draw on one quota (one subscription and region).
TEST(QuotaGroups, MembersOfAGroupShareOneBudget) {
  base::ManualClock clock;
  std::vector<routing::PoolMember> members(3);
  for (std::size_t i = 0; i < members.size(); ++i) {
    members[i].name = "b" + std::to_string(i);
    members[i].tokens_per_window = 100;
    members[i].quota_window = std::chrono::seconds(60);
  }
  members[0].quota_group = "sub1-eastus";
  members[1].quota_group = "sub1-eastus";  // members[2]: its own quota
  routing::RoutingTable table(members);
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(table);
  EXPECT_TRUE(states.reserve(table.member(0), "gpt-4o", 60));
  EXPECT_FALSE(states.available(table.member(1), "gpt-4o", clock.now(), 60))
      << "the group has 40 left, whichever member asks";
  EXPECT_TRUE(states.available(table.member(1), "gpt-4o", clock.now(), 40));
  EXPECT_FALSE(states.reserve(table.member(1), "gpt-4o", 41));
  EXPECT_TRUE(states.reserve(table.member(1), "gpt-4o", 40));
  EXPECT_FALSE(states.available(table.member(0), "gpt-4o", clock.now(), 1)) << "the group is full";
  EXPECT_EQ(states.quota_usage(table.member(1), "gpt-4o").tokens_used, 100);
  EXPECT_TRUE(states.reserve(table.member(2), "gpt-4o", 100)) << "outside the group, its own quota";
  EXPECT_TRUE(states.reserve(table.member(1), "gpt-4o-mini", 100))
      << "a backend's group is per deployment (Azure's quotas are per model)";
  const routing::Unavailability u = states.unavailability(table, "gpt-4o", 1);
  EXPECT_TRUE(u.throttled);
  EXPECT_GT(u.retry_after.count(), 0);
  clock.advance(std::chrono::seconds(61));
  EXPECT_TRUE(states.available(table.member(0), "gpt-4o", clock.now(), 100)) << "the window moved on";
}

}  // namespace backend_states_test
}  // namespace smartlb

namespace smartlb {
namespace backend_states_test {

TEST(QuotaGroups, TargetsWithFixedDeploymentsShareTheGroupAsNamed) {
  base::ManualClock clock;
  std::vector<routing::PoolMember> members(2);
  members[0] = {"east", 1, 1, "gpt-4o-0806"};
  members[1] = {"west", 1, 1, "gpt-4o-prod"};  // the same model, named otherwise
  for (auto& m : members) {
    m.tokens_per_window = 100;
    m.quota_group = "sub1";
  }
  routing::RoutingTable table(members);
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(table);
  EXPECT_TRUE(states.reserve(table.member(0), "gpt-4o", 70));
  EXPECT_FALSE(states.reserve(table.member(1), "gpt-4o", 31));
  EXPECT_TRUE(states.reserve(table.member(1), "gpt-4o", 30));
}

}  // namespace backend_states_test
}  // namespace smartlb

namespace smartlb {
namespace backend_states_test {

using namespace std::chrono_literals;

// Scale-out: what BackendStates tells the Redis side, and what it takes from it.
struct RecordingListener : routing::CooldownListener {
  struct Seen {
    std::string backend, deployment;
    bool whole_backend;
    base::MonoNanos until;
    routing::FailureCause cause;
  };
  void on_cooldown(const routing::CooldownNotice& n) override {
    seen.push_back({std::string(n.backend), std::string(n.deployment), n.whole_backend, n.until, n.cause});
  }
  std::vector<Seen> seen;
};

TEST_F(PoolFixture, SharedCooldowns_ALocalCooldownIsToldOnceWithTheBackendsNameAndDeploymentKey) {
  make({{"east", 1, 1, "prod-gpt"}, {"west", 1, 1, ""}});
  RecordingListener l;
  states->set_cooldown_listener(&l);
  fail(0, "client-name", throttled(), 30s);
  fail(0, "client-name", throttled(), 5s);  // moves nothing: not told
  fail(1, "gpt-4o", refused(), std::nullopt);
  states->hold(member(1), "gpt-4o", routing::FailureCause::FailureTolerance, 120s);
  ASSERT_EQ(l.seen.size(), 3u);
  EXPECT_EQ(l.seen[0].backend, "east");
  EXPECT_EQ(l.seen[0].deployment, "prod-gpt") << "the state's key, the same on every replica";
  EXPECT_FALSE(l.seen[0].whole_backend);
  EXPECT_EQ(l.seen[0].until, clock.now() + base::Nanos(30s).count());
  EXPECT_EQ(l.seen[0].cause, routing::FailureCause::Throttled);
  EXPECT_EQ(l.seen[1].backend, "west");
  EXPECT_TRUE(l.seen[1].whole_backend);
  EXPECT_EQ(l.seen[2].cause, routing::FailureCause::FailureTolerance);
  EXPECT_EQ(l.seen[2].deployment, "gpt-4o");
  states->set_cooldown_listener(nullptr);
}

TEST_F(PoolFixture, SharedCooldowns_ARemoteDeadlineIsAppliedOnThisClockAndNotToldBack) {
  make({{"east", 1, 1, ""}, {"west", 2, 1, ""}});
  RecordingListener l;
  states->set_cooldown_listener(&l);
  const std::int64_t now_ms = states->to_epoch_ms(clock.now());
  EXPECT_TRUE(states->apply_remote_cooldown("east", "gpt-4o", false, now_ms + 20'000,
                                            routing::FailureCause::Throttled));
  EXPECT_TRUE(l.seen.empty()) << "no echo";
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("other"), 0u);
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt-4o").cause, routing::FailureCause::Throttled);
  EXPECT_FALSE(states->apply_remote_cooldown("east", "gpt-4o", false, now_ms + 10'000,
                                             routing::FailureCause::Throttled))
      << "deadlines only grow";
  clock.advance(19'999ms);
  EXPECT_FALSE(available(0, "gpt-4o"));
  clock.advance(1ms);
  EXPECT_TRUE(available(0, "gpt-4o"));

  EXPECT_TRUE(states->apply_remote_cooldown("west", "", true, states->to_epoch_ms(clock.now()) + 1'000,
                                            routing::FailureCause::ConnectFailed));
  EXPECT_EQ(states->backend_cooldown(member(1).id).cause, routing::FailureCause::ConnectFailed);
  EXPECT_FALSE(
      states->apply_remote_cooldown("nobody", "", true, now_ms + 90'000, routing::FailureCause::Throttled));
  EXPECT_TRUE(states->apply_remote_cooldown("east", "far", false, std::numeric_limits<std::int64_t>::max(),
                                            routing::FailureCause::Throttled))
      << "an absurd deadline is capped (a week), not an overflow";
  EXPECT_EQ(states->deployment_cooldown(member(0), "far").until,
            clock.now() + base::Nanos(std::chrono::hours(24 * 7)).count());
  EXPECT_FALSE(
      states->apply_remote_cooldown("east", "gpt-4o", false, now_ms, routing::FailureCause::Throttled))
      << "already over";
  states->set_cooldown_listener(nullptr);
}

}  // namespace backend_states_test
}  // namespace smartlb

namespace smartlb {
namespace backend_states_test {

// Shared quotas (docs/scale-out.md): a broker standing in for Redis records the asks and the
// test answers them.
struct RecordingBroker : routing::LeaseBroker {
  bool shared = true;
  std::size_t replicas = 1;
  std::vector<routing::SharedLease*> attached;
  std::vector<routing::PendingAsk> asks;
  void attach(routing::SharedLease& lease) override {
    attached.push_back(&lease);
    std::lock_guard lock(lease.mutex);
    lease.quota.set_shared(shared, replicas);
  }
  void send(routing::SharedLease& lease, const routing::LeasedQuota::Ask& ask) override {
    asks.push_back({&lease, ask});
  }
  void answer(std::size_t i, std::int64_t grant, routing::LeasedQuota::WallTime now,
              std::int64_t counted = -1, std::int64_t oldest = -1) {
    std::lock_guard lock(asks[i].lease->mutex);
    asks[i].lease->quota.granted(asks[i].ask, grant, now, counted, oldest);
  }
};

struct LeasedQuotas : ::testing::Test {
  base::ManualClock clock;  // its wall clock starts on a minute: the window is [now, now + 60 s)
  RecordingBroker broker;
  std::unique_ptr<routing::RoutingTable> table;
  std::unique_ptr<routing::BackendStates> states;
  void make(std::int64_t tokens, std::int64_t requests = 0, std::string group = "") {
    routing::PoolMember m{"eastus", 1, 1, "", tokens, requests};
    m.quota_window = std::chrono::seconds(60);
    m.quota_group = group;
    table = std::make_unique<routing::RoutingTable>(std::vector<routing::PoolMember>{m});
    states = std::make_unique<routing::BackendStates>(clock, routing::CooldownPolicy{});
    states->track(*table);
    states->set_lease_broker(&broker);
  }
  bool reserve(std::int64_t cost) { return states->reserve(table->member(0), "gpt-4o", cost); }
  bool available(std::int64_t cost) {
    return states->available(table->member(0), "gpt-4o", clock.now(), cost);
  }
};

TEST_F(LeasedQuotas, WithoutABrokerAQuotaHoldsNoLease) {
  make(1000);
  states->set_lease_broker(nullptr);
  EXPECT_TRUE(reserve(100));
  EXPECT_FALSE(states->leases(table->member(0), "gpt-4o").tokens);
}

TEST_F(LeasedQuotas, SharedAQuotaAdmitsWhatTheStoreGrantsBeyondItsLocalWindow) {
  make(1000);
  EXPECT_TRUE(reserve(100)) << "the first request does not wait for the store (a lease's worth on credit)";
  ASSERT_EQ(broker.asks.size(), 1u);
  EXPECT_EQ(broker.asks[0].lease->name, "eastus/gpt-4o:tokens");
  EXPECT_EQ(broker.asks[0].ask.used, 100) << "what it took on credit is reported";
  broker.answer(0, 200, clock.wall_now());
  EXPECT_TRUE(available(200));
  EXPECT_TRUE(reserve(200));
  ASSERT_EQ(broker.asks.size(), 2u) << "the lease ran low: the next one is asked ahead of need";
  EXPECT_FALSE(reserve(1));
  EXPECT_EQ(broker.asks.size(), 2u) << "one ask at a time";
  broker.answer(1, 0, clock.wall_now());  // the other replicas took the rest
  EXPECT_FALSE(available(1)) << "the local window has 700 left; the shared window is spent";
  EXPECT_FALSE(reserve(1));
  const routing::Unavailability u = states->unavailability(*table, "gpt-4o", 1);
  EXPECT_TRUE(u.throttled);
  EXPECT_EQ(u.retry_after, std::chrono::milliseconds(60'000) / routing::LeasedQuota::kDefaultSubwindows)
      << "spent: until the shared sub-window ends (the clock is at the start of one)";
  EXPECT_EQ(states->quota_usage(table->member(0), "gpt-4o").tokens_used, 300);
}

// Two replicas, interactive requests on the other one: this replica's batch lease knows only its
// own grants, so the reserve for the others' demand is kept in what the store left unheld.
TEST_F(LeasedQuotas, ALowerClassKeepsItsReserveInWhatNoOtherReplicaHoldsYet) {
  broker.replicas = 2;
  make(1000);
  const routing::ClassReserve batch{1, 200};                             // leaves at most 20 %
  ASSERT_TRUE(states->reserve(table->member(0), "gpt-4o", 100, batch));  // on credit; the ask reports it
  ASSERT_EQ(broker.asks.size(), 1u);
  broker.answer(0, 300, clock.wall_now(), 850);  // with its 100 and 300, the other replica's 450
  EXPECT_TRUE(states->available(table->member(0), "gpt-4o", clock.now(), 100, batch))
      << "no demand above batch anywhere: 150 unheld + its lease of 300";
  routing::ClassDemand::Rates others{};
  others[0] = {1'000, 10};  // the other replica's interactive requests here
  ASSERT_TRUE(states->apply_shared_demand("eastus", "gpt-4o", others, std::chrono::seconds(1)));
  EXPECT_FALSE(states->available(table->member(0), "gpt-4o", clock.now(), 300, batch))
      << "300 and the reserve (200: the share) do not fit in the 450 no one else holds";
  EXPECT_FALSE(states->reserve(table->member(0), "gpt-4o", 300, batch)) << "the reservation checks it too";
  EXPECT_TRUE(available(460)) << "a first-class request leaves nothing: what others hold is not its business";
  EXPECT_TRUE(states->reserve(table->member(0), "gpt-4o", 250, batch)) << "250 + 200 fit";
  EXPECT_TRUE(states->reserve(table->member(0), "gpt-4o", 50)) << "an interactive request takes the rest";
}

// The window's first grants are recent: nothing comes back for a minute, so batch leaves the
// others' interactive demand until then (up to its share), as with a declared quota of its own --
// not only the least horizon's worth, which the interactive replica would find gone before then.
TEST_F(LeasedQuotas, ALowerClassLeavesTheOthersDemandUntilTheStoreGivesRoomBack) {
  broker.replicas = 2;
  const routing::ClassReserve batch{1, 500};
  routing::ClassDemand::Rates others{};
  others[0] = {10, 1};  // the other replica's interactive requests: 10 tokens a second
  // The store's oldest counted sub-window, from this one back: room comes back when it ends.
  for (const std::int64_t oldest_back : {50, 0}) {
    broker.asks.clear();
    make(1000);
    ASSERT_TRUE(states->reserve(table->member(0), "gpt-4o", 100, batch));  // on credit; the ask reports it
    ASSERT_EQ(broker.asks.size(), 1u);
    ASSERT_TRUE(states->apply_shared_demand("eastus", "gpt-4o", others, std::chrono::seconds(1)));
    // With its 100 and 300, the other replica's 400: 200 unheld, 500 with its own 300 unspent.
    broker.answer(0, 300, clock.wall_now(), 800, broker.asks[0].ask.subwindow - oldest_back);
    if (oldest_back == 50) {
      EXPECT_TRUE(states->available(table->member(0), "gpt-4o", clock.now(), 200, batch))
          << "room comes back at the next sub-window: 200 and 12 (1.2 s of demand) fit";
      continue;
    }
    EXPECT_FALSE(states->available(table->member(0), "gpt-4o", clock.now(), 200, batch))
        << "nothing comes back for 61.2 s: 200 and the reserve (500: the share) do not fit in 500";
    EXPECT_FALSE(states->reserve(table->member(0), "gpt-4o", 200, batch)) << "the reservation checks it too";
    EXPECT_TRUE(states->reserve(table->member(0), "gpt-4o", 200)) << "an interactive request takes it";
  }
}

// Its own lease holds the batch request and its reserve, but the store counts the window past
// its limit (reports of what replicas took beyond their leases): refused, and the answer says
// when to come back, as for any rate limit -- not "now", which would read as an outage (503).
TEST_F(LeasedQuotas, ALowerClassRefusedForWhatOthersHoldIsToldToWaitTheReservesHorizon) {
  broker.replicas = 2;
  make(1000);
  const routing::ClassReserve batch{1, 200};
  ASSERT_TRUE(states->reserve(table->member(0), "gpt-4o", 100, batch));
  ASSERT_EQ(broker.asks.size(), 1u);
  broker.answer(0, 300, clock.wall_now(), 1'200);  // 200 over the limit, reported late
  routing::ClassDemand::Rates others{};
  others[0] = {1'000, 10};
  ASSERT_TRUE(states->apply_shared_demand("eastus", "gpt-4o", others, std::chrono::seconds(1)));
  EXPECT_FALSE(states->reserve(table->member(0), "gpt-4o", 50, batch))
      << "50 and the reserve (250) fit in its lease, not in the 100 unheld (1000 - 1200 + its 300)";
  const routing::Unavailability u = states->unavailability(*table, "gpt-4o", 50, batch);
  EXPECT_TRUE(u.throttled);
  EXPECT_GE(u.retry_after, std::chrono::duration_cast<std::chrono::milliseconds>(routing::kReserveHorizon));
  EXPECT_LT(u.retry_after, std::chrono::milliseconds(60'000) / routing::LeasedQuota::kDefaultSubwindows)
      << "not the sub-window's end: its quota is not spent";
}

TEST_F(LeasedQuotas, ALeaseYetToComeDoesNotHideTheBackendFromThePickItsReserveAsks) {
  broker.replicas = 3;
  make(300);  // a share of 100: no request of 200 on credit
  EXPECT_TRUE(available(200)) << "a lease may come";
  EXPECT_FALSE(reserve(200));
  ASSERT_EQ(broker.asks.size(), 1u) << "the refused reserve asks for what it needed";
  EXPECT_GE(broker.asks[0].ask.tokens, 200);
  broker.answer(0, 200, clock.wall_now());
  EXPECT_TRUE(available(200));
  EXPECT_TRUE(reserve(200));
  ASSERT_EQ(broker.asks.size(), 2u);
  broker.answer(1, 100, clock.wall_now());  // less than asked: the window is spent
  EXPECT_FALSE(available(200)) << "the store said no more: skipped until the window ends";
}

TEST_F(LeasedQuotas, AStoreLostLeavesEachReplicaItsShare) {
  broker.shared = false;
  broker.replicas = 4;
  make(1000);
  EXPECT_TRUE(reserve(200));
  EXPECT_FALSE(reserve(100)) << "1000 / 4 replicas";
  EXPECT_TRUE(broker.asks.empty()) << "nothing to ask a store that is lost";
}

TEST_F(LeasedQuotas, RequestsAreLeasedToo) {
  make(0, 2);
  EXPECT_TRUE(reserve(1000));
  ASSERT_EQ(broker.asks.size(), 1u);
  EXPECT_EQ(broker.asks[0].lease->name, "eastus/gpt-4o:requests");
  broker.answer(0, 1, clock.wall_now());
  EXPECT_TRUE(reserve(1000));
  EXPECT_FALSE(reserve(1000)) << "two requests a window: one on credit, one leased";
}

TEST_F(LeasedQuotas, AGroupsQuotaIsNamedByTheGroup) {
  make(1000, 0, "sub1-eastus");
  EXPECT_TRUE(reserve(100));
  ASSERT_EQ(broker.attached.size(), 1u);
  EXPECT_EQ(broker.attached[0]->name, "group:sub1-eastus/gpt-4o:tokens");
}

TEST_F(PoolFixture, SharedFailures_AHoldByNameLandsOnTheStateKeyAndIsTold) {
  make({{"east", 1, 1, ""}, {"west", 2, 1, ""}});
  RecordingListener l;
  states->set_cooldown_listener(&l);
  EXPECT_TRUE(states->hold_by_name("east", "gpt-4o", routing::FailureCause::FailureTolerance, 30s));
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt-4o").cause, routing::FailureCause::FailureTolerance);
  EXPECT_EQ(pick("gpt-4o"), 1u);
  ASSERT_EQ(l.seen.size(), 1u) << "told, so that the other replicas learn it";
  EXPECT_EQ(l.seen[0].backend, "east");
  EXPECT_EQ(l.seen[0].deployment, "gpt-4o");
  EXPECT_FALSE(states->hold_by_name("nobody", "gpt-4o", routing::FailureCause::FailureTolerance, 30s));
  states->set_cooldown_listener(nullptr);
}

}  // namespace backend_states_test
}  // namespace smartlb
