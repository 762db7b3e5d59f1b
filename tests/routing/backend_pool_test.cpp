#include "smartlb/routing/backend_pool.hpp"

#include <gtest/gtest.h>

#include <map>

namespace smartlb {
namespace {

using namespace std::chrono_literals;

Verdict throttled() { return judge_status(429, true); }
Verdict refused() { return judge_transport(TransportFailure::Connect); }

struct PoolFixture : ::testing::Test {
  ManualClock clock;
  CooldownPolicy policy{10s, 100ms, 300s};
  std::unique_ptr<BackendPool> pool;

  void make(std::vector<PoolMember> members) {
    pool = std::make_unique<BackendPool>(std::move(members), clock, policy);
  }
  std::optional<std::size_t> pick(std::string_view dep = "gpt", const TriedSet& tried = {}) {
    ScriptedRandom rng({0});
    return pool->pick(dep, tried, rng);
  }
};

TEST_F(PoolFixture, Pick_PrefersLowestPriorityNumber) {
  make({{"b0", 2, 1, ""}, {"b1", 1, 1, ""}, {"b2", 3, 1, ""}});
  EXPECT_EQ(pick(), 1u);
}

TEST_F(PoolFixture, Pick_PrimaryThrottled_FallsBackToNextGroup) {
  make({{"primary", 1, 1, ""}, {"secondary", 2, 1, ""}, {"tertiary", 3, 1, ""}});
  pool->record_failure(0, "gpt", throttled(), 5s);
  EXPECT_EQ(pick(), 1u);
  pool->record_failure(1, "gpt", throttled(), 5s);
  EXPECT_EQ(pick(), 2u);
}

TEST_F(PoolFixture, Pick_ReturnsToPrimaryAtItsDeadline) {
  make({{"primary", 1, 1, ""}, {"secondary", 2, 1, ""}});
  pool->record_failure(0, "gpt", throttled(), 7s);
  clock.advance(7s - 1ns);
  EXPECT_EQ(pick(), 1u) << "still cooling one nanosecond before the deadline";
  clock.advance(1ns);
  EXPECT_EQ(pick(), 0u) << "available again exactly at the deadline";
}

TEST_F(PoolFixture, Pick_SkipsBackendsAlreadyTriedByThisRequest) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}, {"c", 2, 1, ""}});
  TriedSet tried;
  tried.add(0);
  EXPECT_EQ(pick("gpt", tried), 1u);
  tried.add(1);
  EXPECT_EQ(pick("gpt", tried), 2u);
  tried.add(2);
  EXPECT_EQ(pick("gpt", tried), std::nullopt);
}

TEST_F(PoolFixture, Pick_AllCoolingDown_ReturnsNothing) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  pool->record_failure(0, "gpt", throttled(), 3s);
  pool->record_failure(1, "gpt", refused(), std::nullopt);
  EXPECT_EQ(pick(), std::nullopt);
}

TEST_F(PoolFixture, Pick_WeightedDistributionFollowsWeights) {
  make({{"w1", 1, 1, ""}, {"w3", 1, 3, ""}, {"w6", 1, 6, ""}, {"other-group", 2, 100, ""}});
  FastRandom rng(12345);
  std::map<std::size_t, int> counts;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) ++counts[*pool->pick("gpt", {}, rng)];
  EXPECT_EQ(counts.count(3), 0u) << "a lower-priority group is never picked while the best has room";
  // Expected shares 10% / 30% / 60%; with 100k draws the standard deviation of a share is
  // under 0.16 percentage points, so +-1 point is over six sigma.
  EXPECT_NEAR(counts[0] / double(kDraws), 0.10, 0.01);
  EXPECT_NEAR(counts[1] / double(kDraws), 0.30, 0.01);
  EXPECT_NEAR(counts[2] / double(kDraws), 0.60, 0.01);
}

TEST_F(PoolFixture, Pick_ScriptedDrawLandsOnWeightBoundaries) {
  make({{"a", 1, 2, ""}, {"b", 1, 3, ""}});
  TriedSet none;
  for (auto [draw, expected] : std::vector<std::pair<std::uint64_t, std::size_t>>{{0, 0}, {1, 0}, {2, 1}, {4, 1}}) {
    ScriptedRandom rng({draw});
    EXPECT_EQ(pool->pick("gpt", none, rng), expected) << "draw " << draw;
  }
}

TEST_F(PoolFixture, Pick_WeightIgnoresCoolingMembers) {
  make({{"a", 1, 1000, ""}, {"b", 1, 1, ""}});
  pool->record_failure(0, "gpt", throttled(), 1s);
  FastRandom rng(7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(pool->pick("gpt", {}, rng), 1u);
}

TEST_F(PoolFixture, Cooldown_IsPerDeployment) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  pool->record_failure(0, "gpt-4o", throttled(), 30s);
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("embeddings"), 0u) << "another deployment on the same backend is unaffected";
}

TEST_F(PoolFixture, Cooldown_TransportFailureBlocksWholeBackend) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}});
  pool->record_failure(0, "gpt-4o", refused(), std::nullopt);
  EXPECT_EQ(pick("gpt-4o"), 1u);
  EXPECT_EQ(pick("embeddings"), 1u);
}

TEST_F(PoolFixture, Cooldown_KeyedByEffectiveDeploymentWhenOverridden) {
  // Backend 0 maps every request onto its own deployment, so one quota covers them all.
  make({{"a", 1, 1, "prod-gpt"}, {"b", 2, 1, ""}});
  pool->record_failure(0, "client-name-1", throttled(), 30s);
  EXPECT_EQ(pick("client-name-2"), 1u);
  EXPECT_EQ(pool->deployment_cooldown(0, "anything").cause, FailureCause::Throttled);
}

TEST_F(PoolFixture, Cooldown_DeadlinesOnlyGrow) {
  make({{"a", 1, 1, ""}});
  pool->record_failure(0, "gpt", throttled(), 60s);
  pool->record_failure(0, "gpt", throttled(), 2s);  // a shorter, later cooldown
  clock.advance(59s);
  EXPECT_FALSE(pool->available(0, "gpt")) << "the shorter cooldown must not cut the deadline";
  pool->record_failure(0, "gpt", throttled(), 10s);  // now ends at 69s: extends
  clock.advance(2s);
  EXPECT_FALSE(pool->available(0, "gpt"));
  clock.advance(8s);
  EXPECT_TRUE(pool->available(0, "gpt"));
}

TEST_F(PoolFixture, Cooldown_ClampsHints) {
  make({{"a", 1, 1, ""}});
  EXPECT_EQ(pool->record_failure(0, "gpt", throttled(), 0ms), 100ms);
  EXPECT_EQ(pool->record_failure(0, "gpt", throttled(), std::chrono::hours(24 * 365)), 300s);
  EXPECT_EQ(pool->record_failure(0, "gpt", throttled(), std::nullopt), 10s);
}

TEST_F(PoolFixture, Unavailability_ReportsSoonestRecoveryAndThrottling) {
  make({{"a", 1, 1, ""}, {"b", 2, 1, ""}, {"c", 3, 1, ""}});
  pool->record_failure(0, "gpt", throttled(), 9s);
  pool->record_failure(1, "gpt", throttled(), 4'500ms);
  pool->record_failure(2, "gpt", throttled(), 20s);
  clock.advance(1s);
  const auto u = pool->unavailability("gpt");
  EXPECT_EQ(u.retry_after, 3'500ms);
  EXPECT_TRUE(u.throttled);
}

TEST_F(PoolFixture, Unavailability_ServerErrorsAreNotReportedAsThrottling) {
  make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
  pool->record_failure(0, "gpt", judge_status(503, true), 2s);
  pool->record_failure(1, "gpt", refused(), std::nullopt);
  const auto u = pool->unavailability("gpt");
  EXPECT_FALSE(u.throttled);
  EXPECT_EQ(u.retry_after, 2s);
}

TEST_F(PoolFixture, DeploymentCooldowns_ListsStateForStatusPages) {
  make({{"a", 1, 1, ""}});
  pool->record_failure(0, "z-dep", throttled(), 1s);
  pool->record_failure(0, "a-dep", throttled(), 2s);
  const auto list = pool->deployment_cooldowns(0);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].first, "a-dep");
  EXPECT_EQ(list[1].first, "z-dep");
}

TEST(TriedSetTest, HoldsIndicesBeyondTheInlineBits) {
  TriedSet t;
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
  FastRandom r(1);
  for (int i = 0; i < 10'000; ++i) EXPECT_LT(r.below(7), 7u);
}

}  // namespace
}  // namespace smartlb

namespace smartlb {
namespace {

using namespace std::chrono_literals;

struct QuotaPool : ::testing::Test {
  ManualClock clock;
  std::unique_ptr<BackendPool> pool;
  void make(std::vector<PoolMember> members) {
    for (auto& m : members) m.quota_window = 1s;
    pool = std::make_unique<BackendPool>(std::move(members), clock, CooldownPolicy{});
  }
  std::optional<std::size_t> pick(std::int64_t cost) {
    ScriptedRandom rng({0});
    return pool->pick("gpt", {}, rng, cost);
  }
};

TEST_F(QuotaPool, Pick_BackendAtItsTokenQuotaIsSkippedBeforeIt429s) {
  make({{"primary", 1, 1, "", 1000, 0}, {"secondary", 2, 1, "", 1000, 0}});
  EXPECT_EQ(pick(600), 0u);
  ASSERT_TRUE(pool->reserve(0, "gpt", 600));
  EXPECT_EQ(pick(600), 1u) << "600 more would exceed the primary's 1000";
  EXPECT_EQ(pick(400), 0u) << "a smaller request still fits";
}

TEST_F(QuotaPool, Pick_RequestQuota) {
  make({{"a", 1, 1, "", 0, 2}, {"b", 2, 1, "", 0, 0}});
  ASSERT_TRUE(pool->reserve(0, "gpt", 0));
  ASSERT_TRUE(pool->reserve(0, "gpt", 0));
  EXPECT_FALSE(pool->reserve(0, "gpt", 0));
  EXPECT_EQ(pick(0), 1u);
}

TEST_F(QuotaPool, QuotaIsPerDeployment) {
  make({{"a", 1, 1, "", 100, 0}});
  ASSERT_TRUE(pool->reserve(0, "gpt", 100));
  ScriptedRandom rng({0});
  EXPECT_EQ(pool->pick("other", {}, rng, 100), 0u);
  EXPECT_EQ(pool->pick("gpt", {}, rng, 1), std::nullopt);
}

TEST_F(QuotaPool, Unavailability_AtQuotaIsThrottlingWithTheTimeUntilItFits) {
  make({{"a", 1, 1, "", 100, 0}});
  ASSERT_TRUE(pool->reserve(0, "gpt", 100));
  const auto u = pool->unavailability("gpt", 10);
  EXPECT_TRUE(u.throttled);
  EXPECT_GT(u.retry_after, 0ms);
  EXPECT_LE(u.retry_after, 1100ms);
  clock.advance(u.retry_after);
  EXPECT_EQ(pick(10), 0u) << "the promised time is when it fits again";
}

TEST_F(QuotaPool, BackendsWithoutQuotaAreUnaffected) {
  make({{"a", 1, 1, "", 0, 0}});
  EXPECT_FALSE(pool->any_quota());
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(pool->reserve(0, "gpt", 1'000'000));
  EXPECT_EQ(pick(1'000'000), 0u);
}

}  // namespace
}  // namespace smartlb

namespace smartlb {
namespace {

TEST(BackendPoolLimits, ClientChosenDeploymentNamesCannotGrowStateWithoutBound) {
  ManualClock clock;
  BackendPool pool({{"a", 1, 1, ""}}, clock, CooldownPolicy{});
  const Verdict missing = judge_status(404, true);
  for (int i = 0; i < 5000; ++i) pool.record_failure(0, "name-" + std::to_string(i), missing, std::chrono::seconds(5));
  EXPECT_EQ(pool.deployment_cooldowns(0).size(), BackendPool::kMaxDeploymentsPerBackend);
  // Names past the cap share the overflow entry: still cooling, conservatively.
  EXPECT_FALSE(pool.available(0, "name-4999"));
  EXPECT_FALSE(pool.available(0, "never-seen-before"));
  clock.advance(std::chrono::seconds(5));
  EXPECT_TRUE(pool.available(0, "never-seen-before"));
  EXPECT_TRUE(pool.available(0, "name-1")) << "names under the cap keep their own entry";
}

}  // namespace
}  // namespace smartlb
