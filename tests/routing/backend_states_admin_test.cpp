// BackendStates and an operator's settings: drained, disabled and held backends and
// deployments are out of every pick, the answer when nothing is left says so honestly, a drain
// follows its in-flight attempts, enable ramps back through slow start, and a reload drops the
// settings of a removed backend.
#include <gtest/gtest.h>

#include <vector>

#include "routing_fixture.hpp"
#include "smartlb/routing/unavailable_answer.hpp"

namespace smartlb {
namespace backend_states_admin_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct RecordingListener final : routing::AdminListener {
  void on_admin_change(const routing::AdminChange& c) override { seen.push_back(c); }
  std::vector<routing::AdminChange> seen;
};

struct AdminPool : RoutingFixture {
  // a (priority 1) and b (priority 2), weight 100 each.
  void SetUp() override { make({{"a", 1, 100, ""}, {"b", 2, 100, ""}}); }

  std::int64_t now_ms() const {
    return std::chrono::duration_cast<base::Millis>(clock.wall_now().time_since_epoch()).count();
  }
  routing::AdminChange change(std::string backend, routing::AdminChange::Kind kind,
                              std::optional<std::string> deployment = {}) {
    routing::AdminChange c;
    c.backend = std::move(backend);
    c.deployment = std::move(deployment);
    c.kind = kind;
    c.stamp = {"ops (write, sha256:00000000)", now_ms()};
    return c;
  }
  bool set_mode(std::string backend, routing::AdminMode m, std::optional<std::string> deployment = {}) {
    routing::AdminChange c =
        change(std::move(backend), routing::AdminChange::Kind::Mode, std::move(deployment));
    c.mode = m;
    return states->change_admin(c);
  }
  bool hold(std::string backend, std::optional<std::chrono::seconds> d,
            std::optional<std::string> deployment = {}) {
    routing::AdminChange c =
        change(std::move(backend), routing::AdminChange::Kind::Hold, std::move(deployment));
    c.hold_until_ms = d ? now_ms() + std::chrono::duration_cast<base::Millis>(*d).count() : 0;
    return states->change_admin(c);
  }
  bool lift(std::string backend, std::optional<std::string> deployment = {}) {
    return states->change_admin(
        change(std::move(backend), routing::AdminChange::Kind::Lift, std::move(deployment)));
  }
  routing::AdminPhase phase(std::string_view backend, std::optional<std::string> deployment = {}) const {
    const auto v = states->admin_view(backend, deployment);
    EXPECT_TRUE(v);
    return v ? admin_phase(v->settings, v->in_flight, now_ms()) : routing::AdminPhase::Enabled;
  }
};

TEST_F(AdminPool, Drain_TakesTheBackendOutOfEveryPick) {
  ASSERT_EQ(pick("gpt-4o"), 0u);
  ASSERT_TRUE(set_mode("a", routing::AdminMode::Drain));
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("embeddings"), 1u) << "every deployment of a drained backend is out";
  EXPECT_FALSE(available(0, "gpt-4o"));
  clock.advance(std::chrono::hours(24));
  EXPECT_EQ(pick("gpt-4o"), 1u) << "until enabled, however long";
  ASSERT_TRUE(set_mode("a", routing::AdminMode::Enabled));
  EXPECT_EQ(pick("gpt-4o"), 0u);
}

TEST_F(AdminPool, Disable_OfOneDeploymentLeavesTheOthers) {
  ASSERT_TRUE(set_mode("a", routing::AdminMode::Disable, "gpt-4o"));
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("embeddings"), 0u);
  EXPECT_EQ(phase("a", "gpt-4o"), routing::AdminPhase::Disabled);
  EXPECT_EQ(phase("a"), routing::AdminPhase::Enabled) << "the backend itself is enabled";
}

TEST_F(AdminPool, ADeploymentIsNamedByItsStateKey) {
  make({{"a", 1, 100, "prod-gpt"}, {"b", 2, 100, ""}});  // a asks for prod-gpt whatever the client said
  ASSERT_TRUE(set_mode("a", routing::AdminMode::Drain, "prod-gpt"));
  EXPECT_EQ(pick("gpt-4o"), 1u);
}

TEST_F(AdminPool, UnknownBackendsAreRefusedAndNobodyIsTold) {
  RecordingListener listener;
  states->set_admin_listener(&listener);
  EXPECT_FALSE(set_mode("c", routing::AdminMode::Drain));
  EXPECT_FALSE(states->admin_view("c", std::nullopt));
  EXPECT_TRUE(listener.seen.empty());
  EXPECT_TRUE(set_mode("a", routing::AdminMode::Drain));
  ASSERT_EQ(listener.seen.size(), 1u);
  EXPECT_EQ(listener.seen[0].backend, "a");
  EXPECT_EQ(listener.seen[0].mode, routing::AdminMode::Drain);
  states->set_admin_listener(nullptr);
}

TEST_F(AdminPool, ARemoteChangeIsAppliedWithoutTellingTheListener) {
  RecordingListener listener;
  states->set_admin_listener(&listener);
  routing::AdminChange c = change("a", routing::AdminChange::Kind::Mode);
  c.mode = routing::AdminMode::Disable;
  EXPECT_TRUE(states->apply_remote_admin(c));
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_TRUE(listener.seen.empty()) << "no echo";
  states->set_admin_listener(nullptr);
}

TEST_F(AdminPool, EveryBackendDrained_Is503WithoutARetryTime) {
  set_mode("a", routing::AdminMode::Drain);
  set_mode("b", routing::AdminMode::Disable, "gpt-4o");
  EXPECT_EQ(pick("gpt-4o"), std::nullopt);
  const routing::Unavailability u = unavailable("gpt-4o");
  EXPECT_TRUE(u.out_of_service);
  EXPECT_FALSE(u.throttled);
  const routing::UnavailableAnswer a = answer_unavailable(u, 0, "gpt-4o");
  EXPECT_EQ(a.status, 503u);
  EXPECT_EQ(a.code, "no_backend_available");
  EXPECT_EQ(a.retry_after, std::nullopt) << "nobody knows when an operator brings one back";
  EXPECT_EQ(a.message, "Every backend for deployment 'gpt-4o' is drained or disabled by an operator.");
  EXPECT_FALSE(unavailable("embeddings").out_of_service) << "b still serves other deployments";
}

TEST_F(AdminPool, DrainedAndThrottled_TheThrottledOneDecidesTheAnswer) {
  set_mode("a", routing::AdminMode::Drain);
  fail(1, "gpt-4o", throttled(), 20s);
  const routing::Unavailability u = unavailable("gpt-4o");
  EXPECT_FALSE(u.out_of_service);
  EXPECT_TRUE(u.throttled);
  EXPECT_EQ(u.retry_after, 20s) << "the drained backend has no recovery to announce";
}

TEST_F(AdminPool, AFailedBackendBesideADrainedOneSaysWhenItRecovers) {
  set_mode("b", routing::AdminMode::Drain);
  fail(0, "gpt-4o", refused(), std::nullopt);  // 10 s, the default
  const routing::Unavailability u = unavailable("gpt-4o");
  EXPECT_FALSE(u.out_of_service);
  EXPECT_FALSE(u.throttled);
  EXPECT_EQ(u.retry_after, 10s);
}

TEST_F(AdminPool, AMissingDeploymentIsA404WhetherOrNotABackendIsDrained) {
  set_mode("b", routing::AdminMode::Drain);
  fail(0, "gpt-typo", routing::judge_status(404, true), std::nullopt);
  const routing::UnavailableAnswer a = answer_unavailable(unavailable("gpt-typo"), 1, "gpt-typo");
  EXPECT_EQ(a.status, 404u) << "the same answer as with b in service: SDKs must not retry a typo";
  EXPECT_EQ(a.code, "model_not_found");
}

TEST_F(AdminPool, ATimedHoldIsACooldownThatEndsWhenTheOperatorSaid) {
  ASSERT_TRUE(hold("a", 30s));
  EXPECT_EQ(pick("gpt"), 1u);
  set_mode("b", routing::AdminMode::Drain);
  const routing::Unavailability u = unavailable("gpt");
  EXPECT_FALSE(u.out_of_service);
  EXPECT_FALSE(u.throttled) << "held by hand, not rate limited";
  EXPECT_EQ(u.retry_after, 30s);
  EXPECT_EQ(phase("a"), routing::AdminPhase::Held);
  clock.advance(29s);
  EXPECT_FALSE(available(0, "gpt"));
  clock.advance(1s);
  EXPECT_TRUE(available(0, "gpt"));
  EXPECT_EQ(phase("a"), routing::AdminPhase::Enabled);
}

TEST_F(AdminPool, AHoldUntilLiftedLastsUntilLifted) {
  ASSERT_TRUE(hold("a", std::nullopt, "gpt"));
  clock.advance(std::chrono::hours(24 * 30));
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_TRUE(available(0, "other"));
  ASSERT_TRUE(lift("a", "gpt"));
  EXPECT_TRUE(available(0, "gpt"));
}

TEST_F(AdminPool, ALaterHoldReplacesAnEarlierOne) {
  hold("a", 60s);
  hold("a", 5s);
  clock.advance(5s);
  EXPECT_TRUE(available(0, "gpt")) << "the operator shortened it";
}

TEST_F(AdminPool, Lift_EndsTheCooldownA429Set) {
  fail(0, "gpt-4o", throttled(), 120s);
  fail(0, "embeddings", throttled(), 120s);
  ASSERT_FALSE(available(0, "gpt-4o"));
  ASSERT_TRUE(lift("a", "gpt-4o"));
  EXPECT_TRUE(available(0, "gpt-4o"));
  EXPECT_FALSE(available(0, "embeddings")) << "one deployment's lift leaves the others";
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt-4o").cause, routing::FailureCause::None);
}

TEST_F(AdminPool, LiftOfTheBackendEndsEveryCooldownAndHoldOnIt) {
  fail(0, "gpt-4o", throttled(), 120s);
  fail(0, "embeddings", refused(), std::nullopt);  // the whole backend
  hold("a", std::nullopt, "mini");
  set_mode("a", routing::AdminMode::Drain, "nano");
  ASSERT_TRUE(lift("a"));
  EXPECT_TRUE(available(0, "gpt-4o"));
  EXPECT_TRUE(available(0, "embeddings"));
  EXPECT_TRUE(available(0, "mini"));
  EXPECT_FALSE(available(0, "nano")) << "a drain is not a cooldown: enable ends it";
}

TEST_F(AdminPool, EnableLeavesA429sCooldownAndAHeldOne) {
  fail(0, "gpt", throttled(), 30s);
  hold("a", 60s, "mini");
  set_mode("a", routing::AdminMode::Drain);
  set_mode("a", routing::AdminMode::Enabled);
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_FALSE(available(0, "mini"));
  EXPECT_TRUE(available(0, "other"));
}

TEST_F(AdminPool, Drain_IsDrainingUntilItsLastAttemptEnds) {
  std::optional<routing::InFlight> first = states->begin_attempt(member(0), "gpt-4o");
  std::optional<routing::InFlight> second = states->begin_attempt(member(0), "embeddings");
  routing::InFlight elsewhere = states->begin_attempt(member(1), "gpt-4o");
  EXPECT_EQ(states->in_flight(member(0).id), 2);
  set_mode("a", routing::AdminMode::Drain);
  EXPECT_EQ(phase("a"), routing::AdminPhase::Draining);
  EXPECT_EQ(states->admin_view("a", std::nullopt)->in_flight, 2);
  first.reset();
  EXPECT_EQ(phase("a"), routing::AdminPhase::Draining);
  second.reset();
  EXPECT_EQ(phase("a"), routing::AdminPhase::Drained) << "b's attempt is not a's";
}

TEST_F(AdminPool, DrainOfADeploymentWaitsOnlyForThatDeployment) {
  routing::InFlight gpt = states->begin_attempt(member(0), "gpt-4o");
  std::optional<routing::InFlight> other = states->begin_attempt(member(0), "embeddings");
  set_mode("a", routing::AdminMode::Drain, "embeddings");
  EXPECT_EQ(phase("a", "embeddings"), routing::AdminPhase::Draining);
  other.reset();
  EXPECT_EQ(phase("a", "embeddings"), routing::AdminPhase::Drained);
}

TEST_F(AdminPool, AttemptsAloneDoNotListADeploymentForStatusPages) {
  routing::InFlight busy = states->begin_attempt(member(0), "gpt-4o");
  EXPECT_TRUE(states->deployment_cooldowns(member(0).id).empty());
  fail(0, "gpt-4o", throttled(), 1s);
  EXPECT_EQ(states->deployment_cooldowns(member(0).id).size(), 1u);
}

TEST_F(AdminPool, Enable_RampsBackThroughSlowStart) {
  set_mode("a", routing::AdminMode::Disable);
  clock.advance(60s);
  set_mode("a", routing::AdminMode::Enabled);
  const routing::TriedSet none;
  const std::size_t both[] = {0, 1};
  routing::Candidates c;
  c.gather(*table, both, *states, {"gpt", none, 0, {}, 10s}, clock.now());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.weight(0), 10u) << "10 % at the start of the ramp";
  EXPECT_EQ(c.weight(1), 100u);
  clock.advance(10s);
  routing::Candidates later;
  later.gather(*table, both, *states, {"gpt", none, 0, {}, 10s}, clock.now());
  EXPECT_EQ(later.weight(0), 100u);
}

TEST_F(AdminPool, ATimedHoldRampsBackFromWhenItEnds) {
  hold("a", 30s);
  clock.advance(30s);
  const routing::TriedSet none;
  const std::size_t both[] = {0, 1};
  routing::Candidates c;
  c.gather(*table, both, *states, {"gpt", none, 0, {}, 10s}, clock.now());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.weight(0), 10u);
}

TEST_F(AdminPool, ARemovedBackendDropsItsSettingsAndStartsEnabledWhenAddedBack) {
  routing::BackendIds ids;
  routing::RoutingTable both({{"a", 1, 100, ""}, {"b", 2, 100, ""}}, ids);
  make({{"a", 1, 100, ""}, {"b", 2, 100, ""}});
  set_mode("b", routing::AdminMode::Drain);
  hold("b", std::nullopt, "gpt");
  routing::RoutingTable only_a({{"a", 1, 100, ""}}, ids);
  states->track(only_a);
  states->forget_removed(only_a);
  EXPECT_FALSE(set_mode("b", routing::AdminMode::Disable)) << "not in the configuration any more";
  EXPECT_FALSE(states->admin_view("b", std::nullopt));
  states->track(both);
  states->forget_removed(both);
  EXPECT_TRUE(available(1, "gpt")) << "added back: enabled, nothing held";
  EXPECT_EQ(phase("b"), routing::AdminPhase::Enabled);
  EXPECT_TRUE(states->admin_scopes(member(1).id).empty());
}

TEST_F(AdminPool, ReplaceAdmin_TakesTheStoresSettingsWholeAndClearsTheRest) {
  set_mode("a", routing::AdminMode::Drain);
  set_mode("a", routing::AdminMode::Disable, "gpt-4o");
  routing::AdminSettings disabled;
  disabled.mode = routing::AdminMode::Disable;
  disabled.mode_set = {"elsewhere", now_ms()};
  states->replace_admin({{"b", std::nullopt, disabled}, {"unknown", std::nullopt, disabled}});
  EXPECT_TRUE(available(0, "gpt-4o")) << "a's settings were not in the store";
  EXPECT_FALSE(available(1, "gpt-4o"));
  const auto scopes = states->admin_scopes(member(1).id);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0].settings.mode_set.by, "elsewhere");
}

TEST_F(AdminPool, AdminScopesListTheBackendFirstThenDeploymentsByName) {
  set_mode("a", routing::AdminMode::Disable, "zeta");
  hold("a", 5s, "alpha");
  set_mode("a", routing::AdminMode::Drain);
  const auto scopes = states->admin_scopes(member(0).id);
  ASSERT_EQ(scopes.size(), 3u);
  EXPECT_FALSE(scopes[0].deployment);
  EXPECT_EQ(scopes[1].deployment, "alpha");
  EXPECT_EQ(scopes[2].deployment, "zeta");
  clock.advance(5s);
  EXPECT_EQ(states->admin_scopes(member(0).id).size(), 2u) << "an ended hold is not listed";
}

}  // namespace backend_states_admin_test
}  // namespace smartlb
