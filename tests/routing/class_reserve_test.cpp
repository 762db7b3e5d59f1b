// What a lower priority class leaves to the classes above it: their recent demand at the target
// over the time until room comes back (a declared window's next release, a report's reset), at
// most the class's share; with no demand above it, it may take everything. Plain routing state
// on a manual clock.
#include "smartlb/routing/class_reserve.hpp"

#include <gtest/gtest.h>

#include "routing_fixture.hpp"
#include "smartlb/routing/reported_budget.hpp"
#include "smartlb/routing/target_choice.hpp"

namespace smartlb {
namespace class_reserve_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const routing::ClassReserve kBatch{1, 200};  // at most 20 %
const routing::ClassReserve kFirst{};

TEST(ClassReserve, TheAmountIsTheDemandAboveOverTheHorizonAtMostTheShare) {
  EXPECT_EQ(reserve_amount(kBatch, 1'000, 200ms, 10'000), 200) << "1,000 tokens/s for 0.2 s";
  EXPECT_EQ(reserve_amount(kBatch, 1'000'000, 200ms, 10'000), 2'000) << "at most 20 % of the limit";
  EXPECT_EQ(reserve_amount(kBatch, 0, 200ms, 10'000), 0) << "nothing asked above it: nothing kept";
  EXPECT_EQ(reserve_amount(kFirst, 1'000, 200ms, 10'000), 0) << "the first class keeps nothing back";
  EXPECT_EQ(reserve_amount(kBatch, 1'000, 200ms, 0), 0) << "no known limit";
  EXPECT_EQ(routing::with_reserve(10, 100, 20), 30);
  EXPECT_EQ(routing::with_reserve(90, 100, 20), 100)
      << "larger than what the reserve leaves: an empty window";
  EXPECT_EQ(routing::with_reserve(150, 100, 20), 150) << "never less than its cost";
}

TEST(ClassReserve, DemandIsTheDecayedRateOfTheLevelsAbove) {
  routing::ClassDemand d;
  d.add(0, 100, 0);
  d.add(0, 100, 0);
  d.add(1, 5'000, 0);
  double tokens = 0, requests = 0;
  d.above(1, 0, tokens, requests);
  EXPECT_DOUBLE_EQ(tokens, 100.0) << "200 tokens over a 2 s time constant";
  EXPECT_DOUBLE_EQ(requests, 1.0);
  d.above(2, 0, tokens, requests);
  EXPECT_DOUBLE_EQ(tokens, 2'600.0) << "level 2 leaves room for levels 0 and 1";
  d.above(1, 2'000'000'000, tokens, requests);
  EXPECT_NEAR(tokens, 100.0 / std::exp(1.0), 1e-9) << "it fades when nothing more comes";
  d.above(0, 0, tokens, requests);
  EXPECT_EQ(tokens, 0.0);
}

TEST(ClassReserve, TheOtherReplicasDemandAddsToThisOnesUntilItExpires) {
  routing::ClassDemand d;
  d.add(0, 200, 0);  // 100 tokens/s here
  routing::ClassDemand::Rates others{};
  others[0] = {300, 3};
  others[1] = {1'000, 1};
  d.set_remote(others, 1'000'000'000);
  double tokens = 0, requests = 0;
  d.above(1, 0, tokens, requests);
  EXPECT_DOUBLE_EQ(tokens, 400.0) << "100 here and 300 elsewhere";
  EXPECT_DOUBLE_EQ(requests, 3.5);
  EXPECT_DOUBLE_EQ(d.local(0)[0].tokens_per_second, 100.0) << "what this replica tells is its own";
  d.above(1, 1'000'000'000, tokens, requests);
  EXPECT_NEAR(tokens, 100.0 / std::exp(0.5), 1e-9) << "the others' demand ends unless renewed";
}

struct ReservePool : QuotaPool {
  std::optional<std::size_t> pick_class(std::int64_t cost, routing::ClassReserve cls) {
    base::ScriptedRandom rng({0});
    routing::TriedSet tried;
    return priority.pick(*table, *states, {"gpt", tried, cost, {}, base::Nanos{0}, cls}, rng);
  }
  // Chosen and reserved, as a request is (with the pool's check).
  std::optional<std::size_t> send_class(std::int64_t cost, routing::ClassReserve cls) {
    base::ScriptedRandom rng({0});
    routing::TriedSet tried;
    const auto choice = routing::choose_and_reserve(
        priority, *table, *states, {"gpt", tried, cost, {}, base::Nanos{0}, cls}, tried, rng);
    return choice ? std::optional<std::size_t>(choice->position) : std::nullopt;
  }
  void sent(std::size_t i, std::int64_t cost, routing::ClassReserve cls) {
    ASSERT_TRUE(states->reserve(member(i), "gpt", cost, cls));
  }
};

TEST_F(ReservePool, DeclaredQuota_ALowerClassLeavesWhatTheClassesAboveAskForUntilRoomComesBack) {
  make({{"a", 1, 1, "", 1'000, 0}});  // 1,000 tokens per second
  sent(0, 100, kBatch);
  // 100 tokens/s above batch; all was sent at once, so the window gives nothing back for 1 s
  // (and a 256th): 101 tokens are kept.
  for (int i = 0; i < 2; ++i) sent(0, 100, kFirst);
  EXPECT_EQ(pick_class(600, kBatch), std::nullopt) << "300 used + 600 + 101 > 1,000";
  EXPECT_EQ(pick_class(599, kBatch), 0u);
  EXPECT_EQ(pick_class(700, kFirst), 0u) << "the first class may take it all";
  EXPECT_FALSE(states->reserve(member(0), "gpt", 600, kBatch)) << "the reservation checks it too";
  EXPECT_TRUE(states->reserve(member(0), "gpt", 599, kBatch));
  EXPECT_EQ(states->quota_usage(member(0), "gpt").tokens_used, 899) << "only the cost is ever counted";
}

TEST_F(ReservePool, DeclaredQuota_WithNothingAskedAboveItALowerClassTakesEverything) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 400, kBatch);
  EXPECT_EQ(pick_class(600, kBatch), 0u) << "no demand above: no reserve, no idle quota";
}

TEST_F(ReservePool, DeclaredQuota_ARequestRefusedByATargetIsNoDemandThere) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 1, kBatch);
  EXPECT_FALSE(states->reserve(member(0), "gpt", 2'000, kFirst))
      << "larger than the quota: it goes elsewhere";
  EXPECT_EQ(pick_class(900, kBatch), 0u) << "nothing was sent above batch here: nothing is kept";
}

TEST_F(ReservePool, DeclaredQuota_TheReserveIsAtMostTheClassShare) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 1, kBatch);
  for (int i = 0; i < 5; ++i) sent(0, 100, kFirst);  // 250 tokens/s: 251 until room comes back
  const routing::ClassReserve small{1, 10};          // at most 1 %: 10 tokens
  EXPECT_EQ(pick_class(489, small), 0u) << "501 used + 489 + 10 = 1,000";
  EXPECT_EQ(pick_class(490, small), std::nullopt);
}

TEST_F(ReservePool, DeclaredQuota_ALowerClassGoesToATargetWithRoomBeforeBeingRefused) {
  make({{"a", 1, 1, "", 1'000, 0}, {"b", 2, 1, "", 1'000, 0}});
  sent(0, 100, kBatch);
  for (int i = 0; i < 8; ++i) sent(0, 100, kFirst);  // 900 used; 200 (the share) kept
  EXPECT_EQ(pick_class(50, kBatch), 1u) << "a's room is its reserve: b, in a worse group, serves";
  EXPECT_EQ(pick_class(50, kFirst), 0u);
}

TEST_F(ReservePool, DeclaredQuota_ALowerClassLeavesRoomForTheDemandAboveOnOtherReplicas) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 800, kBatch);
  EXPECT_EQ(pick_class(150, kBatch), 0u) << "nothing asked above batch anywhere";
  routing::ClassDemand::Rates others{};
  others[0] = {250, 2.5};  // another replica's interactive requests there
  EXPECT_FALSE(states->apply_shared_demand("z", "gpt", others, 1s)) << "a backend this replica does not have";
  ASSERT_TRUE(states->apply_shared_demand("a", "gpt", others, 1s));
  EXPECT_EQ(pick_class(150, kBatch), std::nullopt) << "800 + 150 + 200 (the share) > 1,000";
  EXPECT_EQ(pick_class(150, kFirst), 0u);
}

TEST_F(ReservePool, AnotherReplicasLowerClassStartsTheCountingOfThisOnesDemand) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 100, kFirst);
  EXPECT_TRUE(states->class_demand(0.01).empty()) << "no lower class seen: nothing counted, nothing to tell";
  routing::ClassDemand::Rates others{};
  others[1] = {50, 0.5};  // batch, elsewhere
  ASSERT_TRUE(states->apply_shared_demand("a", "gpt", others, 1s));
  sent(0, 100, kFirst);
  const auto told = states->class_demand(0.01);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].backend, "a");
  EXPECT_EQ(told[0].deployment, "gpt");
  EXPECT_DOUBLE_EQ(told[0].rates[0].tokens_per_second, 50.0) << "this replica's own, not the others'";
  EXPECT_EQ(told[0].rates[1].requests_per_second, 0.0);
}

TEST_F(ReservePool, Unavailability_TellsALowerClassWhenItsCostAndTheReserveFit) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 100, kBatch);
  for (int i = 0; i < 8; ++i) sent(0, 100, kFirst);
  EXPECT_EQ(states->unavailability(*table, "gpt", 50, kFirst).retry_after, 0ms) << "the first class fits now";
  const auto u = states->unavailability(*table, "gpt", 50, kBatch);
  EXPECT_TRUE(u.throttled);
  EXPECT_TRUE(u.predicted) << "the reserve is smartlb's own";
  EXPECT_GT(u.retry_after, 0ms);
  clock.advance(u.retry_after);
  EXPECT_EQ(pick_class(50, kBatch), 0u) << "the promised time is when it fits with its reserve";
}

TEST_F(ReservePool, DeclaredQuota_TheDemandAboveAFullMemberIsLeftRoomAtTheOthers) {
  make({{"a", 1, 1, "", 1'000, 0}, {"b", 1, 1, "", 1'000, 0}});
  sent(0, 100, kBatch);
  for (int i = 0; i < 9; ++i) sent(0, 100, kFirst);  // a full: 450 tokens/s above batch, back in 1 s
  // b has seen none of it, yet it is where a's interactive requests go now: between them, a and
  // b keep 452 (at most 20 % of the 2,000: 400) of b's 1,000.
  EXPECT_EQ(send_class(601, kBatch), std::nullopt);
  routing::TriedSet none;
  EXPECT_FALSE(another_candidate(*table, *states, {"gpt", none, 601, {}, base::Nanos{0}, kBatch}));
  const auto u = states->unavailability(*table, "gpt", 601, kBatch);
  EXPECT_TRUE(u.throttled);
  EXPECT_EQ(u.retry_after, 200ms) << "no one window says when the pool has room: looked at again in 0.2 s";
  EXPECT_EQ(pick_class(1'000, kFirst), 1u) << "the first class may take it all";
  EXPECT_EQ(send_class(600, kBatch), 1u);
}

TEST_F(ReservePool, DeclaredQuota_MembersOfOneQuotaGroupCountItsRoomOnce) {
  make({{"a", 1, 1, "", 1'000, 0, 1s, "g"}, {"b", 1, 1, "", 1'000, 0, 1s, "g"}});
  sent(0, 100, kBatch);
  for (int i = 0; i < 4; ++i) sent(0, 100, kFirst);  // 200 tokens/s above batch
  // 500 left in the group; 201 of it kept, at most 20 % of the group's 1,000 (not of 2,000).
  EXPECT_EQ(send_class(301, kBatch), std::nullopt);
  EXPECT_TRUE(send_class(300, kBatch).has_value());
}

TEST_F(ReservePool, DeclaredQuota_ALowerClassLeavesWhatLaterReleasesWillNotGiveBack) {
  // z, with no quota, leaves the pool unbounded: a keeps its own reserve.
  make({{"a", 1, 1, "", 1'000, 0}, {"z", 2, 1, "", 0, 0}});
  sent(0, 10, kBatch);  // back in 1.004 s
  clock.advance(500ms);
  for (int i = 0; i < 4; ++i) sent(0, 100, kFirst);  // back in 1.504 s
  clock.advance(400ms);
  // 164 tokens/s above batch. The next release gives back 10; the one after it, 0.6 s from now,
  // 400: until then they ask for 99, less the 10 (0.2 s of their demand, the least kept: 33).
  EXPECT_EQ(pick_class(501, kBatch), 0u) << "410 + 501 + 89 = 1,000";
  EXPECT_EQ(pick_class(502, kBatch), 1u) << "to z, which has no quota";
}

TEST_F(ReservePool, ARequestNoTargetHadRoomFor_IsDemandAtTheMembersItWouldHaveGoneTo) {
  make({{"a", 1, 1, "", 1'000, 0}});
  sent(0, 1, kBatch);
  EXPECT_EQ(pick_class(800, kBatch), 0u) << "nothing asked above batch yet";
  // An interactive request of 500 tokens that found no room: 250 tokens/s above batch, at most
  // 200 kept (20 %).
  states->count_refused(*table, "gpt", 500, 0);
  EXPECT_EQ(pick_class(800, kBatch), std::nullopt) << "1 used + 800 + 200 > 1,000";
  EXPECT_EQ(pick_class(799, kBatch), 0u);
}

routing::RateLimitReport left(std::int64_t tokens, std::int64_t requests) {
  routing::RateLimitReport r;
  r.remaining_tokens = tokens;
  r.remaining_requests = requests;
  return r;
}

TEST(ClassReserveReports, ALowerClassLeavesTheDemandAboveOfWhatIsReported) {
  routing::ReportedBudget b;
  b.observe(left(10'000, 50), 0, {});  // the most reported: 10,000 tokens
  b.observe(left(2'300, 50), 1'000'000, {});
  routing::ClassReserve batch = kBatch;
  batch.tokens_per_second = 5'000;  // 1,000 over 0.2 s
  EXPECT_EQ(b.room(1'300, 1'000'000), routing::ReportedBudget::Room::Fits);
  EXPECT_EQ(b.room(1'300, 1'000'000, batch), routing::ReportedBudget::Room::Fits)
      << "1,300 + 1,000 fit in 2,300";
  EXPECT_EQ(b.room(1'301, 1'000'000, batch), routing::ReportedBudget::Room::Confirmed);
  EXPECT_EQ(b.room(1'301, 1'000'000 + routing::ReportedBudget::kFreshFor.count(), batch),
            routing::ReportedBudget::Room::Probe)
      << "a reserve read from reports holds as long as the report, like any other";
  batch.tokens_per_second = 1e9;
  EXPECT_EQ(b.room(300, 1'000'000, batch), routing::ReportedBudget::Room::Fits)
      << "at most 20 %: 300 + 2,000 fit";
}

TEST(ClassReserveReports, TheDemandAboveIsCoveredUntilTheResetTheBackendNamed) {
  routing::ReportedBudget b;
  b.observe(left(10'000, 50), 0, {});
  routing::RateLimitReport r = left(2'300, 50);
  r.reset_tokens = std::chrono::milliseconds(1'000);  // a window that jumps back in 1 s
  b.observe(r, 1'000'000, {});
  routing::ClassReserve batch = kBatch;
  batch.tokens_per_second = 1'000;  // 1,000 until the reset
  EXPECT_EQ(b.room(1'300, 1'000'000, batch), routing::ReportedBudget::Room::Fits)
      << "1,300 + 1,000 fit in 2,300";
  EXPECT_EQ(b.room(1'301, 1'000'000, batch), routing::ReportedBudget::Room::Confirmed);
  EXPECT_EQ(b.room(2'000, 1'000'000), routing::ReportedBudget::Room::Fits)
      << "the first class leaves nothing";
}

constexpr base::MonoNanos kMs = 1'000'000;

TEST(ClassReserveReports, NothingComeBackYet_TheDemandAboveIsCoveredForAThirdOfTheTimeTheLimitWasLow) {
  routing::ReportedBudget b;
  b.observe(left(10'000, 500), kMs, {});  // low from 1 ms
  b.observe(left(5'000, 500), 3'001 * kMs, {});
  routing::ClassReserve batch = kBatch;
  batch.tokens_per_second = 1'000;  // over 1 s: 1,000 kept
  EXPECT_EQ(b.room(4'000, 3'001 * kMs, batch), routing::ReportedBudget::Room::Fits);
  EXPECT_NE(b.room(4'001, 3'001 * kMs, batch), routing::ReportedBudget::Room::Fits)
      << "a first window is at least 3 s long: 0.2 s of their demand would let batch take what they then "
         "miss";
  b.observe(left(6'000, 500), 3'100 * kMs, {});  // 1,000 came back: a refill
  EXPECT_EQ(b.room(5'800, 3'100 * kMs, batch), routing::ReportedBudget::Room::Fits)
      << "room comes back: 0.2 s of their demand, 200";
}

TEST(ClassReserveReports, AWindowThatJumpsBack_TheDemandAboveIsCoveredUntilItsNextJump) {
  // A fixed 3 s window of 10,000 tokens, with no reset hint: low from 1 ms, full again at 3 s.
  routing::ReportedBudget b;
  for (base::MonoNanos t : {1, 2'900, 3'050}) b.observe(left(t == 2'900 ? 2'000 : 10'000, 50), t * kMs, {});
  b.observe(left(5'000, 50), 4'000 * kMs, {});
  routing::ClassReserve batch = kBatch;
  batch.tokens_per_second = 500;
  // After one jump, the next is no sooner than the first window was long: 6.099 s, 1,050 kept.
  EXPECT_EQ(b.room(3'950, 4'000 * kMs, batch), routing::ReportedBudget::Room::Fits);
  EXPECT_NE(b.room(3'951, 4'000 * kMs, batch), routing::ReportedBudget::Room::Fits)
      << "0.2 s of their demand would let batch take what they then miss before the jump";
  // Full again at 6 s: the period two jumps taught, 3 s; the next at 9.05 s.
  b.observe(left(2'000, 50), 5'900 * kMs, {});
  b.observe(left(10'000, 50), 6'050 * kMs, {});
  b.observe(left(2'000, 50), 8'000 * kMs, {});
  EXPECT_EQ(b.room(1'475, 8'000 * kMs, batch), routing::ReportedBudget::Room::Fits) << "525 kept";
  EXPECT_NE(b.room(1'476, 8'000 * kMs, batch), routing::ReportedBudget::Room::Fits);
  EXPECT_EQ(b.room(2'000, 8'000 * kMs), routing::ReportedBudget::Room::Fits)
      << "the first class leaves nothing";
}

TEST(ClassReserveReports, MuchComeBackIntoAWindowStillShort_IsNoJump) {
  // 3,000 back at once, yet only 4,000 of 10,000 free: a sliding window that others fill too.
  routing::ReportedBudget b;
  b.observe(left(10'000, 50), kMs, {});
  b.observe(left(1'000, 50), 2'900 * kMs, {});
  b.observe(left(4'000, 50), 3'050 * kMs, {});
  b.observe(left(1'000, 50), 4'000 * kMs, {});
  routing::ClassReserve batch = kBatch;
  batch.tokens_per_second = 500;
  EXPECT_EQ(b.room(900, 4'000 * kMs, batch), routing::ReportedBudget::Room::Fits)
      << "room came back: 0.2 s of their demand, 100, not until a jump guessed 3 s on";
  EXPECT_NE(b.room(901, 4'000 * kMs, batch), routing::ReportedBudget::Room::Fits);
}

// A 1 s sliding window of 2,000 tokens (ten requests of 200), reporting what it has left; a
// refused request's Retry-After names the moment its oldest send leaves the window.
struct SlidingReports {
  routing::ReportedBudget b;
  std::vector<base::MonoNanos> taken_at;  // ms
  SlidingReports() { b.observe(left(2'000, 1'000), 0, {}); }
  void send(base::MonoNanos t) {
    std::size_t in = 0;
    for (base::MonoNanos at : taken_at) in += at > t - 1'000;
    const bool taken = in < 10;
    if (taken) taken_at.push_back(t);
    const std::int64_t left_now = 2'000 - 200 * static_cast<std::int64_t>(in + taken);
    b.observe(left(left_now, 1'000), t * kMs, b.charge(200), taken);
    if (taken) return;
    for (base::MonoNanos at : taken_at)
      if (at > t - 1'000) return b.retry_at((at + 1'000) * kMs);
  }
};

TEST(ClassReserveReports, OnceTheEchoIsLearned_AGapInWhatComesBackIsKeptForTheClassesAbove) {
  SlidingReports s;
  for (base::MonoNanos t : {10, 24, 31, 52, 60, 77, 91, 98, 120, 135}) s.send(t);
  // Refused, then taken as each of the first five leaves: five moments teach the 1 s window.
  for (base::MonoNanos t : {10, 24, 31, 52, 60}) {
    s.send(1'000 + t - 5);
    s.send(1'000 + t);
  }
  s.send(1'136);  // after the last five left: 800 left, and nothing comes back for 874 ms
  routing::ClassReserve batch = kBatch;
  batch.tokens_per_second = 500;  // 437 by then: at most 400 kept (20 %)
  const base::MonoNanos now = 1'137 * kMs;
  EXPECT_EQ(s.b.room(400, now, batch), routing::ReportedBudget::Room::Fits);
  EXPECT_NE(s.b.room(401, now, batch), routing::ReportedBudget::Room::Fits)
      << "0.2 s of their demand (100) would leave them short before the next send comes back";
  EXPECT_EQ(s.b.room(800, now), routing::ReportedBudget::Room::Fits) << "the first class leaves nothing";
}

}  // namespace class_reserve_test
}  // namespace smartlb
