// Selection: which members may serve (candidates) and how one is chosen (priority, weighted).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "routing_fixture.hpp"
#include "smartlb/routing/selectors/weighted_selector.hpp"

namespace smartlb {
namespace selectors_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST_F(PoolFixture, Pick_PrefersLowestPriorityNumber) {
  make({{"b0", 2, 1, ""}, {"b1", 1, 1, ""}, {"b2", 3, 1, ""}});
  EXPECT_EQ(pick(), 1u);
}

TEST_F(PoolFixture, Pick_PrimaryThrottled_FallsBackToNextGroup) {
  make({{"primary", 1, 1, ""}, {"secondary", 2, 1, ""}, {"tertiary", 3, 1, ""}});
  fail(0, "gpt", throttled(), 5s);
  EXPECT_EQ(pick(), 1u);
  fail(1, "gpt", throttled(), 5s);
  EXPECT_EQ(pick(), 2u);
}

TEST_F(PoolFixture, Pick_ReturnsToPrimaryAtItsDeadline) {
  make({{"primary", 1, 1, ""}, {"secondary", 2, 1, ""}});
  fail(0, "gpt", throttled(), 7s);
  clock.advance(7s - 1ns);
  EXPECT_EQ(pick(), 1u) << "still cooling one nanosecond before the deadline";
  clock.advance(1ns);
  EXPECT_EQ(pick(), 0u) << "available again exactly at the deadline";
}

TEST_F(PoolFixture, Pick_SkipsBackendsAlreadyTriedByThisRequest) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}, {"c", 2, 1, ""}});
  routing::TriedSet tried;
  tried.add(0);
  EXPECT_EQ(pick("gpt", tried), 1u);
  tried.add(1);
  EXPECT_EQ(pick("gpt", tried), 2u);
  tried.add(2);
  EXPECT_EQ(pick("gpt", tried), std::nullopt);
}

TEST_F(PoolFixture, Pick_AllCoolingDown_ReturnsNothing) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  fail(0, "gpt", throttled(), 3s);
  fail(1, "gpt", refused(), std::nullopt);
  EXPECT_EQ(pick(), std::nullopt);
}

TEST_F(PoolFixture, Pick_WeightedDistributionFollowsWeights) {
  make({{"w1", 1, 1, ""}, {"w3", 1, 3, ""}, {"w6", 1, 6, ""}, {"other-group", 2, 100, ""}});
  base::FastRandom rng(12345);
  std::map<std::size_t, int> counts;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) ++counts[*pick_with("gpt", {}, rng)];
  EXPECT_EQ(counts.count(3), 0u) << "a lower-priority group is never picked while the best has room";
  // Expected shares 10% / 30% / 60%; with 100k draws the standard deviation of a share is
  // under 0.16 percentage points, so +-1 point is over six sigma.
  EXPECT_NEAR(counts[0] / double(kDraws), 0.10, 0.01);
  EXPECT_NEAR(counts[1] / double(kDraws), 0.30, 0.01);
  EXPECT_NEAR(counts[2] / double(kDraws), 0.60, 0.01);
}

TEST_F(PoolFixture, Pick_ScriptedDrawLandsOnWeightBoundaries) {
  make({{"a", 1, 2, ""}, {"b", 1, 3, ""}});
  routing::TriedSet none;
  for (auto [draw, expected] :
       std::vector<std::pair<std::uint64_t, std::size_t>>{{0, 0}, {1, 0}, {2, 1}, {4, 1}}) {
    base::ScriptedRandom rng({draw});
    EXPECT_EQ(pick_with("gpt", none, rng), expected) << "draw " << draw;
  }
}

TEST_F(PoolFixture, Pick_WeightIgnoresCoolingMembers) {
  make({{"a", 1, 1000, ""}, {"b", 1, 1, ""}});
  fail(0, "gpt", throttled(), 1s);
  base::FastRandom rng(7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(pick_with("gpt", {}, rng), 1u);
}

TEST(TriedSetTest, HoldsIndicesBeyondTheInlineBits) {
  routing::TriedSet t;
  t.add(3);
  t.add(70);
  t.add(70);
  EXPECT_TRUE(t.contains(3));
  EXPECT_TRUE(t.contains(70));
  EXPECT_FALSE(t.contains(4));
  EXPECT_FALSE(t.contains(200));
  EXPECT_EQ(t.count(), 2u);
}

TEST(FastRandomTest, BelowStaysInRange) {
  base::FastRandom r(1);
  for (int i = 0; i < 10'000; ++i) EXPECT_LT(r.below(7), 7u);
}

TEST_F(QuotaPool, Pick_BackendAtItsTokenQuotaIsSkippedBeforeIt429s) {
  make({{"primary", 1, 1, "", 1000, 0}, {"secondary", 2, 1, "", 1000, 0}});
  EXPECT_EQ(pick(600), 0u);
  ASSERT_TRUE(reserve(0, "gpt", 600));
  EXPECT_EQ(pick(600), 1u) << "600 more would exceed the primary's 1000";
  EXPECT_EQ(pick(400), 0u) << "a smaller request still fits";
}

TEST_F(QuotaPool, Pick_RequestQuota) {
  make({{"a", 1, 1, "", 0, 2}, {"b", 2, 1, "", 0, 0}});
  ASSERT_TRUE(reserve(0, "gpt", 0));
  ASSERT_TRUE(reserve(0, "gpt", 0));
  EXPECT_FALSE(reserve(0, "gpt", 0));
  EXPECT_EQ(pick(0), 1u);
}

TEST_F(PoolFixture, WeightedSelectorIgnoresPriorities) {
  make({{"w1", 1, 1, ""}, {"w3", 2, 3, ""}});
  routing::WeightedSelector weighted;
  base::FastRandom rng(99);
  std::map<std::size_t, int> counts;
  constexpr int kDraws = 40'000;
  for (int i = 0; i < kDraws; ++i) ++counts[*weighted.pick(*table, *states, {"gpt", {}, 0}, rng)];
  // Shares 25 % / 75 %: with 40k draws a share's standard deviation is about 0.22 points.
  EXPECT_NEAR(counts[0] / double(kDraws), 0.25, 0.015);
  EXPECT_NEAR(counts[1] / double(kDraws), 0.75, 0.015);
}

TEST_F(PoolFixture, WeightedSelectorSkipsTriedAndCoolingMembers) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}, {"c", 3, 1, ""}});
  routing::WeightedSelector weighted;
  fail(1, "gpt", throttled(), 5s);
  routing::TriedSet tried;
  tried.add(0);
  base::ScriptedRandom rng({0});
  EXPECT_EQ(weighted.pick(*table, *states, {"gpt", tried, 0}, rng), 2u);
  tried.add(2);
  EXPECT_EQ(weighted.pick(*table, *states, {"gpt", tried, 0}, rng), std::nullopt);
}

TEST_F(PoolFixture, CandidatesSpillPastTheirInlineStorage) {
  std::vector<routing::PoolMember> members;
  for (int i = 0; i < 100; ++i) members.push_back({"b" + std::to_string(i), 1, 1, ""});
  make(members);
  routing::Candidates c;
  const routing::TriedSet none;
  c.gather(*table, table->groups()[0].members, *states, {"gpt", none, 0}, clock.now());
  ASSERT_EQ(c.size(), 100u);
  EXPECT_EQ(c.total_weight(), 100u);
  for (std::size_t k = 0; k < c.size(); ++k) EXPECT_EQ(c[k], k);
  base::ScriptedRandom last({99});
  EXPECT_EQ(c.draw_weighted(*table, last), 99u);
}

}  // namespace selectors_test
}  // namespace smartlb

namespace smartlb {
namespace selectors_test {

std::vector<routing::PoolMember> named(std::initializer_list<std::pair<const char*, std::uint32_t>> list) {
  std::vector<routing::PoolMember> out;
  for (const auto& [name, weight] : list) {
    routing::PoolMember m;
    m.name = name;
    m.weight = weight;
    out.push_back(m);
  }
  return out;
}

TEST_F(PoolFixture, AffinityKeyKeepsToOneMemberWhateverTheDraw) {
  make(named({{"a", 1}, {"b", 1}, {"c", 1}}));
  const routing::TriedSet none;
  std::optional<std::size_t> first;
  for (std::uint64_t draw : {0u, 1u, 2u}) {
    base::ScriptedRandom rng({draw});
    const auto p = priority.pick(*table, *states, {"gpt", none, 0, "conversation-42"}, rng);
    ASSERT_TRUE(p);
    if (!first) first = p;
    EXPECT_EQ(*p, *first) << "the draw does not matter with an affinity key";
  }
  // Its member cooling down moves the key elsewhere, and back when it returns.
  fail(*first, "gpt", throttled(), std::chrono::seconds(1));
  base::ScriptedRandom rng({0});
  const auto moved = priority.pick(*table, *states, {"gpt", none, 0, "conversation-42"}, rng);
  ASSERT_TRUE(moved);
  EXPECT_NE(*moved, *first);
  clock.advance(std::chrono::seconds(2));
  base::ScriptedRandom rng2({0});
  EXPECT_EQ(priority.pick(*table, *states, {"gpt", none, 0, "conversation-42"}, rng2), first);
}

TEST_F(PoolFixture, SlowStartDrawsAMemberBackFromACooldownWithLessWeight) {
  make(named({{"a", 100}, {"b", 100}}));
  fail(0, "gpt", throttled(), std::chrono::seconds(1));
  clock.advance(std::chrono::seconds(1));  // a's cooldown just ended
  const routing::TriedSet none;
  routing::Candidates c;
  c.gather(*table, table->groups()[0].members, *states, {"gpt", none, 0, {}, std::chrono::seconds(10)},
           clock.now());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.weight(0), 10u) << "10 % at the start of the ramp";
  EXPECT_EQ(c.weight(1), 100u) << "never cooled down: full weight";
  clock.advance(std::chrono::seconds(5));
  routing::Candidates half;
  half.gather(*table, table->groups()[0].members, *states, {"gpt", none, 0, {}, std::chrono::seconds(10)},
              clock.now());
  EXPECT_EQ(half.weight(0), 55u) << "half way";
  routing::Candidates off;
  off.gather(*table, table->groups()[0].members, *states, {"gpt", none}, clock.now());
  EXPECT_EQ(off.weight(0), 100u) << "slow start off";
  // The draw follows the reduced weights: 0..9 is a, 10..109 is b.
  base::ScriptedRandom nine({9}), ten({10});
  EXPECT_EQ(c.draw_weighted(*table, nine), 0u);
  EXPECT_EQ(c.draw_weighted(*table, ten), 1u);
}

}  // namespace selectors_test
}  // namespace smartlb
