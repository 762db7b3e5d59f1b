// Active health as routing keeps it: a failed probe makes a backend unhealthy (a soft standing:
// passed over while another may serve, used rather than refuse), a passed one ends that and the
// cooldown its network failures started.
#include <gtest/gtest.h>

#include "routing_fixture.hpp"
#include "smartlb/routing/target_choice.hpp"

namespace smartlb {
namespace health_state_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct Health : RoutingFixture {
  void SetUp() override { make({{"a", 1, 1, ""}, {"b", 2, 1, ""}}); }
  std::optional<routing::TargetChoice> choose(const routing::TriedSet& tried = {}) {
    base::ScriptedRandom rng({0});
    return choose_target(priority, *table, *states, {"gpt", tried}, rng);
  }
};

TEST_F(Health, AnUnhealthyBackendIsPassedOverWhileAnotherMayServe) {
  states->health_failed(member(0).id, clock.now() + base::Nanos(30s).count());
  EXPECT_EQ(states->standing(member(0), "gpt", clock.now()), routing::BackendStates::Standing::Unhealthy);
  EXPECT_FALSE(available(0, "gpt"));
  ASSERT_TRUE(choose());
  EXPECT_EQ(choose()->position, 1u) << "the priority-2 backend serves";
}

TEST_F(Health, WhenEveryCandidateIsUnhealthyOneIsUsedRatherThanRefuse) {
  states->health_failed(member(0).id, clock.now() + base::Nanos(30s).count());
  states->health_failed(member(1).id, clock.now() + base::Nanos(30s).count());
  ASSERT_TRUE(choose());
  EXPECT_EQ(choose()->position, 0u) << "the best priority group's";
  routing::TriedSet tried;
  tried.add(0);
  tried.add(1);
  EXPECT_FALSE(choose(tried));
  EXPECT_TRUE(another_candidate(*table, *states, {"gpt", routing::TriedSet{}}));
}

TEST_F(Health, AStaleResultSaysNothing) {
  states->health_failed(member(0).id, clock.now() + base::Nanos(30s).count());
  clock.advance(31s);
  EXPECT_TRUE(available(0, "gpt"));
}

TEST_F(Health, APassedProbeEndsTheCooldownOfANetworkFailureButNotA429) {
  fail(0, "gpt", refused(), std::nullopt);  // connect failed: the whole backend cools 10 s
  fail(1, "gpt", throttled(), 20000ms);
  EXPECT_FALSE(available(0, "gpt"));
  clock.advance(1s);
  states->health_passed(member(0).id);
  states->health_passed(member(1).id);
  EXPECT_TRUE(available(0, "gpt")) << "it answers again: back at once";
  EXPECT_FALSE(available(1, "gpt")) << "a 429's Retry-After is the backend's word";
  EXPECT_EQ(states->cooldown_ended(member(0), "gpt"), clock.now()) << "slow start ramps from now";
}

TEST_F(Health, APassedProbeEndsUnhealthy) {
  states->health_failed(member(0).id, clock.now() + base::Nanos(30s).count());
  states->health_passed(member(0).id);
  EXPECT_TRUE(available(0, "gpt"));
}

}  // namespace health_state_test
}  // namespace smartlb
