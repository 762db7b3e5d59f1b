// A replica's share of a max_in_flight held with others: admitted within its lease, one ask when
// short of it (the request waits for the answer), the tick giving back and renewing, Redis lost.
#include "smartlb/clients/in_flight_share.hpp"

#include <gtest/gtest.h>

namespace smartlb::clients {
namespace in_flight_share_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using Verdict = InFlightShare::Verdict;

constexpr base::MonoNanos at(base::Nanos d) { return d.count(); }

struct InFlightLeased : ::testing::Test {
  InFlightShare s;
  std::optional<InFlightShare::Ask> ask;   // what the last take() sent, if anything
  std::optional<InFlightShare::Ask> last;  // the last ask sent, by take() or tick()
  InFlightLeased() { s.set_shared(true, 3); }
  Verdict take(std::int64_t in_use, bool waiting = false, std::int64_t cap = 4) {
    ask.reset();
    const Verdict v = s.take(in_use, cap, ask, waiting);
    if (ask) last = ask;
    return v;
  }
  std::optional<InFlightShare::Ask> tick(std::int64_t in_use, base::Nanos now) {
    auto a = s.tick(in_use, 4, at(now));
    if (a) last = a;
    return a;
  }
  void answer(std::int64_t grant, std::int64_t others, base::Nanos now = 0s) {
    ASSERT_TRUE(last);
    s.granted(*last, grant, others, at(now));
  }
};

TEST_F(InFlightLeased, WithoutALeaseTheFirstRequestAsksAndWaitsForTheAnswer) {
  EXPECT_EQ(take(0), Verdict::Wait);
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->in_use, 0);
  EXPECT_EQ(ask->want, 1);
  EXPECT_EQ(ask->cap, 4);
  EXPECT_TRUE(s.asking());
  // The same request looking again, and another one, wait on the same ask.
  EXPECT_EQ(take(0, /*waiting=*/true), Verdict::Wait);
  EXPECT_EQ(take(0), Verdict::Wait);
  EXPECT_FALSE(ask);
  answer(1, 0);
  EXPECT_EQ(take(0, true), Verdict::Admit);
}

TEST_F(InFlightLeased, WithinItsLeaseAReplicaAdmitsWithNoAsk) {
  take(0);
  answer(3, 1);
  for (std::int64_t in_use = 0; in_use < 3; ++in_use) {
    EXPECT_EQ(take(in_use), Verdict::Admit);
    EXPECT_FALSE(ask);
  }
}

TEST_F(InFlightLeased, ShortOfItsLeaseItAsksForOneSlotPerRequestThatBeganWaiting) {
  take(0);
  answer(1, 0);
  EXPECT_EQ(take(1), Verdict::Wait);
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->in_use, 1);
  EXPECT_EQ(ask->want, 2);
  // While it is out: the first request looks again (not counted twice), two more begin waiting.
  EXPECT_EQ(take(1, true), Verdict::Wait);
  EXPECT_EQ(take(1), Verdict::Wait);
  EXPECT_EQ(take(1), Verdict::Wait);
  EXPECT_EQ(take(1, true), Verdict::Wait);
  answer(2, 0);
  EXPECT_EQ(take(2, true), Verdict::Wait);
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->want, 4) << "what it holds, and the two that began waiting since the last ask";
  answer(4, 0);
  EXPECT_EQ(take(2, true), Verdict::Admit);
  EXPECT_EQ(take(3, true), Verdict::Admit);
}

TEST_F(InFlightLeased, AnAnswerShortOfTheAskRefusesWithNoAskUntilTheNextTick) {
  take(0);
  answer(1, 3);  // the others hold the rest
  EXPECT_EQ(take(1), Verdict::Wait);
  answer(1, 3);
  EXPECT_EQ(take(1, true), Verdict::Refuse) << "told no: no round trip per refused request";
  EXPECT_EQ(take(1), Verdict::Refuse);
  EXPECT_FALSE(ask);
  EXPECT_EQ(s.in_flight_everywhere(1, 4), 4);
  EXPECT_FALSE(tick(1, 100ms)) << "no slot asked for requests that are gone";
  EXPECT_EQ(take(1), Verdict::Wait) << "a request after the tick asks again";
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->want, 2);
}

TEST_F(InFlightLeased, TheCapReachedOnThisReplicaAloneRefusesWithNoAsk) {
  EXPECT_EQ(take(4), Verdict::Refuse);
  EXPECT_FALSE(ask);
  EXPECT_FALSE(s.asking());
}

TEST_F(InFlightLeased, TheTickGivesBackWhatIsHeldBeyondTheRequestsInFlightAtOnce) {
  take(0);
  answer(3, 0);
  const auto back = tick(1, 100ms);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->in_use, 1);
  EXPECT_EQ(back->want, 1);
  // While the giving back is out, this replica holds no more than it gives back to.
  EXPECT_EQ(s.allowed(4), 1);
  EXPECT_EQ(take(1), Verdict::Wait);
  answer(1, 0, 100ms);
  EXPECT_EQ(s.lease(), 1);
}

TEST_F(InFlightLeased, AnIdleReplicaGivesAllBackAndThenAsksNothing) {
  take(0);
  answer(1, 0);
  const auto back = tick(0, 100ms);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->want, 0);
  answer(0, 0, 100ms);
  EXPECT_FALSE(tick(0, 200ms));
  EXPECT_FALSE(tick(0, 10s)) << "nothing held: nothing to renew";
}

TEST_F(InFlightLeased, IdleWhileOthersHoldSlotsItAsksForNothingOnceASecondToLearnWhenTheyEnd) {
  take(0);
  answer(1, 2);
  const auto back = tick(0, 100ms);
  ASSERT_TRUE(back);
  answer(0, 2, 100ms);
  EXPECT_EQ(s.in_flight_everywhere(0, 4), 2) << "the others' leases";
  EXPECT_FALSE(tick(0, 500ms));
  const auto look = tick(0, 100ms + kInFlightRenewEvery);
  ASSERT_TRUE(look);
  EXPECT_EQ(look->want, 0);
  answer(0, 0, 100ms + kInFlightRenewEvery);
  EXPECT_EQ(s.in_flight_everywhere(0, 4), 0) << "their requests ended";
  EXPECT_FALSE(tick(0, 10s)) << "everyone idle: nothing asked";
}

TEST_F(InFlightLeased, TheCountEverywhereNeverHidesThisReplicasOwn) {
  take(0);
  answer(3, 2);
  EXPECT_EQ(s.in_flight_everywhere(1, 4), 3) << "1 here and 2 elsewhere";
  EXPECT_EQ(s.in_flight_everywhere(1, 2), 2) << "the others' fill the cap at most";
  EXPECT_EQ(s.in_flight_everywhere(3, 2), 3) << "a reload lowered the cap under this replica's own";
}

TEST_F(InFlightLeased, ALeaseInUseIsRenewedBeforeTheStoreForgetsIt) {
  take(0);
  answer(2, 0);
  EXPECT_FALSE(tick(2, 500ms));
  const auto renew = tick(2, kInFlightRenewEvery);
  ASSERT_TRUE(renew);
  EXPECT_EQ(renew->want, 2);
  EXPECT_LT(kInFlightRenewEvery * 3, kInFlightLeaseTtl) << "a few renewals may fail first";
}

TEST_F(InFlightLeased, AFailedAskKeepsToTheLocalShareAndTheTickAsksUntilAnAnswer) {
  take(0);
  answer(3, 0);
  take(3);  // short: asks for a fourth
  ASSERT_TRUE(last);
  s.ask_failed(*last);
  EXPECT_EQ(s.allowed(4), 1) << "4 / 3 replicas, at least 1; not the lease it may have lost";
  EXPECT_EQ(take(0), Verdict::Admit);
  EXPECT_EQ(take(1), Verdict::Refuse);
  const auto a = tick(1, 100ms);
  ASSERT_TRUE(a) << "even with nothing to change, the tick asks while the last ask failed";
  answer(3, 1, 100ms);
  EXPECT_EQ(take(2), Verdict::Admit);
}

TEST_F(InFlightLeased, AnAnswerToAnAskFromBeforeRedisCameBackIsIgnored) {
  take(0);
  const InFlightShare::Ask before = *last;
  s.set_shared(true, 3);  // Redis back: the lease is unknown again
  EXPECT_FALSE(s.asking());
  s.granted(before, 4, 0, at(0s));
  EXPECT_EQ(s.lease(), 0) << "an answer for a lease this replica no longer counts on";
  s.ask_failed(before);
  EXPECT_EQ(s.allowed(4), 0) << "nor does its failure";
}

TEST_F(InFlightLeased, RedisBackForgetsTheLeaseAndTheTickReportsWhatIsHeld) {
  take(0);
  answer(2, 0);
  s.set_shared(true, 3);
  EXPECT_EQ(s.lease(), 0);
  const auto a = tick(2, 1ms);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->in_use, 2);
  EXPECT_EQ(a->want, 2);
}

TEST(InFlightShare, RedisLostEachReplicaKeepsToTheCapOverTheLiveReplicas) {
  InFlightShare s;
  s.set_shared(false, 2);
  std::optional<InFlightShare::Ask> ask;
  EXPECT_EQ(s.allowed(5), 2);
  EXPECT_EQ(s.take(1, 5, ask), Verdict::Admit);
  EXPECT_EQ(s.take(2, 5, ask), Verdict::Refuse);
  EXPECT_FALSE(ask);
  EXPECT_FALSE(s.tick(2, 5, at(1s))) << "nothing to ask while Redis is lost";
  s.set_shared(false, 8);
  EXPECT_EQ(s.allowed(5), 1) << "at least one slot per replica";
}

}  // namespace in_flight_share_test
}  // namespace smartlb::clients
