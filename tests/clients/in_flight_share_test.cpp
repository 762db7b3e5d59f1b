// A replica's share of a max_in_flight held with others: admitted within its lease, one ask when
// short of it (the request waits for the answer), the tick giving back and renewing, Redis lost.
#include "smartlb/clients/in_flight_share.hpp"

#include <gtest/gtest.h>

namespace smartlb::clients {
namespace {

using namespace std::chrono_literals;
using Verdict = InFlightShare::Verdict;

constexpr base::MonoNanos at(base::Nanos d) { return d.count(); }

struct InFlightLeased : ::testing::Test {
  InFlightShare s;
  std::optional<InFlightShare::Ask> ask;
  InFlightLeased() { s.set_shared(true, 3); }
  Verdict take(std::int64_t in_use, std::int64_t cap = 4) {
    ask.reset();
    return s.take(in_use, cap, ask);
  }
};

TEST_F(InFlightLeased, WithoutALeaseTheFirstRequestAsksAndWaitsForTheAnswer) {
  EXPECT_EQ(take(0), Verdict::Wait);
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->in_use, 0);
  EXPECT_EQ(ask->want, 1);
  EXPECT_EQ(ask->cap, 4);
  EXPECT_TRUE(s.asking());
  // Another request meanwhile waits on the same ask.
  EXPECT_EQ(take(0), Verdict::Wait);
  EXPECT_FALSE(ask);
  s.granted({0, 1, 4}, 1, 0, at(0s));
  EXPECT_EQ(take(0), Verdict::Admit);
}

TEST_F(InFlightLeased, WithinItsLeaseAReplicaAdmitsWithNoAsk) {
  take(0);
  s.granted(*ask, 3, 1, at(0s));
  for (std::int64_t in_use = 0; in_use < 3; ++in_use) {
    EXPECT_EQ(take(in_use), Verdict::Admit);
    EXPECT_FALSE(ask);
  }
}

TEST_F(InFlightLeased, ShortOfItsLeaseItAsksForWhatItHoldsAndEveryRequestFoundShort) {
  take(0);
  s.granted(*ask, 1, 0, at(0s));
  EXPECT_EQ(take(1), Verdict::Wait);
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->in_use, 1);
  EXPECT_EQ(ask->want, 2);
  EXPECT_EQ(take(1), Verdict::Wait);  // a second request, found short while the ask is out
  s.granted({1, 2, 4}, 2, 0, at(0s));
  EXPECT_EQ(take(2), Verdict::Wait);
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->want, 4) << "what it holds, and the two found short since the last ask (at most the cap)";
}

TEST_F(InFlightLeased, AnAnswerShortOfTheAskRefusesWithNoAskUntilTheNextTick) {
  take(0);
  s.granted(*ask, 1, 3, at(0s));  // the others hold the rest
  EXPECT_EQ(take(1), Verdict::Wait);
  s.granted(*ask, 1, 3, at(0s));
  EXPECT_EQ(take(1), Verdict::Refuse) << "told no: no round trip per refused request";
  EXPECT_FALSE(ask);
  EXPECT_EQ(s.in_flight_everywhere(1, 4), 4);
  EXPECT_FALSE(s.tick(1, 4, at(100ms))) << "no slot asked for requests that are gone";
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
  s.granted({0, 3, 4}, 3, 0, at(0s));
  const auto back = s.tick(1, 4, at(100ms));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->in_use, 1);
  EXPECT_EQ(back->want, 1);
  // While the giving back is out, this replica holds no more than it gives back to.
  EXPECT_EQ(s.allowed(4), 1);
  EXPECT_EQ(take(1), Verdict::Wait);
  s.granted(*back, 1, 0, at(100ms));
  EXPECT_EQ(s.lease(), 1);
}

TEST_F(InFlightLeased, AnIdleReplicaGivesAllBackAndThenAsksNothing) {
  take(0);
  s.granted({0, 1, 4}, 1, 0, at(0s));
  const auto back = s.tick(0, 4, at(100ms));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->want, 0);
  s.granted(*back, 0, 0, at(100ms));
  EXPECT_FALSE(s.tick(0, 4, at(200ms)));
  EXPECT_FALSE(s.tick(0, 4, at(10s))) << "nothing held: nothing to renew";
}

TEST_F(InFlightLeased, ALeaseInUseIsRenewedBeforeTheStoreForgetsIt) {
  take(0);
  s.granted({0, 2, 4}, 2, 0, at(0s));
  EXPECT_FALSE(s.tick(2, 4, at(500ms)));
  const auto renew = s.tick(2, 4, at(kInFlightRenewEvery));
  ASSERT_TRUE(renew);
  EXPECT_EQ(renew->want, 2);
  EXPECT_LT(kInFlightRenewEvery * 3, kInFlightLeaseTtl) << "a few renewals may fail first";
}

TEST_F(InFlightLeased, AFailedAskKeepsToTheLocalShareUntilAnAnswer) {
  take(0);
  s.ask_failed();
  EXPECT_EQ(s.allowed(4), 1) << "4 / 3 replicas, at least 1";
  EXPECT_EQ(take(0), Verdict::Admit);
  EXPECT_EQ(take(1), Verdict::Refuse);
  const auto a = s.tick(1, 4, at(100ms));
  ASSERT_TRUE(a);
  s.granted(*a, 3, 1, at(100ms));
  EXPECT_EQ(take(2), Verdict::Admit);
}

TEST_F(InFlightLeased, RedisBackForgetsTheLeaseAndTheTickReportsWhatIsHeld) {
  take(0);
  s.granted({0, 2, 4}, 2, 0, at(0s));
  s.set_shared(true, 3);
  EXPECT_EQ(s.lease(), 0);
  const auto a = s.tick(2, 4, at(1ms));
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

}  // namespace
}  // namespace smartlb::clients
