// Affinity: weighted rendezvous hashing of a key over the candidates.
#include "smartlb/routing/affinity.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "routing_fixture.hpp"

namespace smartlb {
namespace affinity_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct AffinityPool : RoutingFixture {
  std::size_t pick_for(std::string_view key, const routing::TriedSet& tried = {}) {
    routing::Candidates c;
    const routing::PickRequest request{"gpt", tried, 0};
    for (const routing::PriorityGroup& g : table->groups())
      c.gather(*table, g.members, *states, request, clock.now());
    return pick_by_affinity(key, c, *table);
  }
  static std::string key(int i) { return "user-" + std::to_string(i); }
};

TEST(AffinityHash, IsPinnedAcrossBuilds) {
  // Fixed values: a change here moves every client's affinity on upgrade.
  EXPECT_EQ(routing::affinity_hash("", ""), 0x813f0174a2367c13u);
  EXPECT_EQ(routing::affinity_hash("user-1", "east"), 0x64fddfe42b4a7680u);
  EXPECT_EQ(routing::affinity_hash("cache-key", "west"), 0xc05d5338c0e5bd44u);
}

TEST(AffinityHash, KeyAndNameAreNotJustConcatenated) {
  EXPECT_NE(routing::affinity_hash("ab", "c"), routing::affinity_hash("a", "bc"));
  EXPECT_NE(routing::affinity_hash("k", "east"), routing::affinity_hash("k", "west"));
}

TEST(AffinityScore, GrowsWithWeightAndIsZeroWithout) {
  EXPECT_GT(routing::affinity_score("k", "m", 2), routing::affinity_score("k", "m", 1));
  EXPECT_DOUBLE_EQ(routing::affinity_score("k", "m", 2), 2 * routing::affinity_score("k", "m", 1));
  EXPECT_EQ(routing::affinity_score("k", "m", 0), 0);
  EXPECT_GT(routing::affinity_score("k", "m", 1), 0);
}

TEST_F(AffinityPool, SameKeySameMember) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}, {"c", 2, 1, ""}});
  for (int i = 0; i < 50; ++i) {
    const std::size_t first = pick_for(key(i));
    for (int again = 0; again < 3; ++again) EXPECT_EQ(pick_for(key(i)), first);
  }
}

TEST_F(AffinityPool, FollowsTheNameNotThePosition) {
  make({{"a", 1, 1, ""}, {"b", 1, 2, ""}, {"c", 1, 3, ""}});
  std::vector<std::string> before;
  for (int i = 0; i < 200; ++i) before.push_back(member(pick_for(key(i))).name);
  make({{"c", 1, 3, ""}, {"a", 1, 1, ""}, {"b", 1, 2, ""}});
  for (int i = 0; i < 200; ++i) EXPECT_EQ(member(pick_for(key(i))).name, before[i]) << key(i);
}

TEST_F(AffinityPool, KeysSpreadByWeight) {
  make({{"w1", 1, 1, ""}, {"w2", 1, 2, ""}, {"w7", 1, 7, ""}});
  std::map<std::size_t, int> counts;
  constexpr int kKeys = 20'000;
  for (int i = 0; i < kKeys; ++i) ++counts[pick_for(key(i))];
  // Expected 10% / 20% / 70%. A fixed key set, so the result never changes; the bound is what
  // a fair hash meets: the standard deviation of a share is at most 0.33 points over 20k keys,
  // so +-1.5 points is over four sigma.
  EXPECT_NEAR(counts[0] / double(kKeys), 0.1, 0.015);
  EXPECT_NEAR(counts[1] / double(kKeys), 0.2, 0.015);
  EXPECT_NEAR(counts[2] / double(kKeys), 0.7, 0.015);
}

TEST_F(AffinityPool, RemovingAMemberMovesOnlyItsKeys) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}, {"c", 1, 1, ""}, {"d", 1, 2, ""}, {"e", 2, 1, ""}});
  constexpr int kKeys = 2'000;
  std::vector<std::size_t> all;
  for (int i = 0; i < kKeys; ++i) all.push_back(pick_for(key(i)));

  fail(2, "gpt", throttled(), 5s);  // "c" cools down
  int moved = 0;
  std::map<std::size_t, int> moved_to;
  for (int i = 0; i < kKeys; ++i) {
    const std::size_t now = pick_for(key(i));
    if (all[i] == 2) {
      EXPECT_NE(now, 2u);
      ++moved;
      ++moved_to[now];
    } else {
      EXPECT_EQ(now, all[i]) << key(i) << " was not on the member that left";
    }
  }
  EXPECT_GT(moved, kKeys / 10) << "c held about a sixth of the keys";
  EXPECT_EQ(moved_to.size(), 4u) << "its keys spread over every other member";

  clock.advance(5s);
  for (int i = 0; i < kKeys; ++i) EXPECT_EQ(pick_for(key(i)), all[i]) << "back when it is back";
}

TEST_F(AffinityPool, TriedMemberIsLeftForTheNextBest) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}, {"c", 1, 1, ""}});
  for (int i = 0; i < 100; ++i) {
    const std::size_t first = pick_for(key(i));
    routing::TriedSet tried;
    tried.add(first);
    const std::size_t second = pick_for(key(i), tried);
    EXPECT_NE(second, first);
    tried.add(second);
    const std::size_t third = pick_for(key(i), tried);
    EXPECT_NE(third, first);
    EXPECT_NE(third, second);
  }
}

TEST_F(AffinityPool, ZeroWeightOnlyWhenAlone) {
  make({{"zero", 1, 0, ""}, {"one", 1, 1, ""}});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(pick_for(key(i)), 1u);
  routing::TriedSet tried;
  tried.add(1);
  EXPECT_EQ(pick_for(key(0), tried), 0u);
}

}  // namespace affinity_test
}  // namespace smartlb
