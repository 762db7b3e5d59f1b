#include "smartlb/routing/leased_quota.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>

namespace smartlb {
namespace {

using namespace std::chrono;
using WallTime = LeasedQuota::WallTime;

const WallTime kStart = WallTime(seconds(1'700'000'080));  // 40 s into a minute window

LeasedQuota quota(std::int64_t limit) { return LeasedQuota({limit, minutes(1), milliseconds(500), 10}); }

TEST(LeasedQuota, LocallyAReplicaHasItsShareOfEachWindow) {
  LeasedQuota q = quota(900);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(200, kStart));
  EXPECT_TRUE(q.try_take(100, kStart));
  EXPECT_FALSE(q.try_take(1, kStart)) << "900 / 3 replicas";
  EXPECT_FALSE(q.ask(kStart)) << "nothing to ask a store that is lost";
  EXPECT_TRUE(q.try_take(300, kStart + seconds(20))) << "a new window";
}

TEST(LeasedQuota, SharedItTakesOnlyWhatTheStoreGranted) {
  LeasedQuota q = quota(10'000);
  q.set_shared(true, 3);
  EXPECT_FALSE(q.try_take(200, kStart)) << "no lease yet";
  const auto a = q.ask(kStart, 200);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->window, q.window_of(kStart));
  EXPECT_GE(a->tokens, 200);
  EXPECT_FALSE(q.ask(kStart, 200)) << "one ask at a time";
  q.granted(*a, 200, kStart);
  EXPECT_TRUE(q.try_take(200, kStart));
  EXPECT_FALSE(q.try_take(1, kStart));
}

TEST(LeasedQuota, AsksAheadOfNeedAtHalfTheLastLease) {
  LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart);
  EXPECT_TRUE(q.try_take(400, kStart));
  EXPECT_FALSE(q.ask(kStart)) << "600 of 1000 left";
  EXPECT_TRUE(q.try_take(200, kStart));
  a = q.ask(kStart);
  ASSERT_TRUE(a) << "400 left: below half";
  EXPECT_EQ(a->window, q.window_of(kStart));
}

TEST(LeasedQuota, TheNextWindowsLeaseIsAskedBeforeItBegins) {
  LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart);
  const WallTime late = kStart + milliseconds(19'700);  // 300 ms before the window ends
  const auto next = q.ask(late);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->window, q.window_of(kStart) + 1);
  q.granted(*next, 500, late);
  EXPECT_TRUE(q.try_take(500, kStart + seconds(20))) << "the first request of the new window finds its lease";
}

TEST(LeasedQuota, AGrantForAWindowAlreadyGoneIsVoid) {
  LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  const auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart + seconds(25));
  EXPECT_FALSE(q.try_take(100, kStart + seconds(25)));
}

TEST(LeasedQuota, BackToSharedItReportsWhatItTookLocally) {
  LeasedQuota q = quota(9000);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(2500, kStart));
  q.set_shared(true, 3);
  const auto a = q.ask(kStart);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->used, 2500);
  q.granted(*a, 300, kStart);
  EXPECT_TRUE(q.try_take(300, kStart)) << "the report is not taken from the new lease";
  EXPECT_FALSE(q.try_take(1, kStart));
  const auto b = q.ask(kStart);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->used, 0) << "reported once";
}

TEST(LeasedQuota, AdjustMovesOnlyTheLocalCount) {
  LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  const auto a = q.ask(kStart, 300);
  q.granted(*a, 300, kStart);
  EXPECT_TRUE(q.try_take(300, kStart));
  q.adjust(q.window_of(kStart), -200);  // the answer used 100
  EXPECT_TRUE(q.try_take(200, kStart));
}

LeasedQuota bridged(std::int64_t limit) {
  LeasedQuota::Options o{limit, minutes(1), milliseconds(500), 10};
  o.bridge = true;
  return LeasedQuota(o);
}

TEST(LeasedQuota, BridgedItTakesALeasesWorthBeforeTheStoresFirstAnswerAndReportsIt) {
  LeasedQuota q = bridged(9000);
  q.set_shared(true, 3);
  EXPECT_TRUE(q.fits(200, kStart));
  EXPECT_TRUE(q.try_take(200, kStart)) << "the first request does not wait for the store";
  EXPECT_FALSE(q.try_take(500, kStart)) << "no more than a lease's worth (two requests) on credit";
  const auto a = q.ask(kStart);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->used, 200) << "what it took on credit is reported";
  q.granted(*a, 400, kStart);
  EXPECT_TRUE(q.try_take(400, kStart));
  EXPECT_FALSE(q.try_take(1, kStart)) << "answered: only the lease counts";
}

TEST(LeasedQuota, BridgedNeverMoreThanTheLocalShare) {
  LeasedQuota q = bridged(300);
  q.set_shared(true, 3);
  EXPECT_FALSE(q.try_take(200, kStart)) << "100 is the share";
  EXPECT_TRUE(q.try_take(100, kStart));
}

TEST(LeasedQuota, BridgedAStoreThatGrantsNothingStopsTheCredit) {
  LeasedQuota q = bridged(9000);
  q.set_shared(true, 3);
  const auto a = q.ask(kStart, 100);
  q.granted(*a, 0, kStart);
  EXPECT_FALSE(q.try_take(100, kStart));
  EXPECT_EQ(q.wait_for(100, kStart), seconds(20)) << "spent: until the window ends";
}

TEST(LeasedQuota, BridgedBackToSharedTheCreditStartsAgainAfterTheLocalTakes) {
  LeasedQuota q = bridged(9000);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(2000, kStart));
  q.set_shared(true, 3);
  EXPECT_TRUE(q.try_take(200, kStart)) << "the store returned: no refusal while the first ask is out";
  const auto a = q.ask(kStart);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->used, 2200);
}

TEST(LeasedQuota, FitsAndWaitForTakeNothing) {
  LeasedQuota q = quota(900);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.fits(300, kStart));
  EXPECT_FALSE(q.fits(301, kStart));
  EXPECT_TRUE(q.try_take(300, kStart));
  EXPECT_FALSE(q.fits(1, kStart));
  EXPECT_EQ(q.wait_for(1, kStart), seconds(20)) << "local and spent: the window's end";
  EXPECT_EQ(q.wait_for(0, kStart), seconds(0));
  q.set_shared(true, 3);
  EXPECT_EQ(q.wait_for(1, kStart), milliseconds(500)) << "a lease is on its way";
}

// Three replicas and a store that grants exactly what is left: under 120 % of the quota spread
// 3:1:1, no window ever gets more than the limit, and nearly all of it is used.
TEST(LeasedQuota, ThreeReplicasTogetherKeepToTheLimitAndUseNearlyAllOfIt) {
  constexpr std::int64_t kLimit = 60'000;  // per minute: 1000 tokens/s
  constexpr std::int64_t kCost = 200;
  std::array<LeasedQuota, 3> replicas = {quota(kLimit), quota(kLimit), quota(kLimit)};
  for (auto& r : replicas) r.set_shared(true, 3);
  std::map<std::int64_t, std::int64_t> store;  // window -> granted
  std::map<std::int64_t, std::int64_t> served;
  std::mt19937 rng(7);
  const double share[3] = {0.6, 0.2, 0.2};
  const WallTime start = WallTime(minutes(28'333'334));  // a window boundary
  // 1200 tokens/s offered = 6 requests/s; in 10 ms steps for 5 windows.
  for (int step = 0; step < 5 * 6000; ++step) {
    const WallTime now = start + milliseconds(10 * step);
    for (std::size_t k = 0; k < 3; ++k) {
      LeasedQuota& r = replicas[k];
      const bool arrives = std::uniform_real_distribution<>(0, 1)(rng) < 0.06 * share[k];
      bool refused = false;
      if (arrives) {
        if (r.try_take(kCost, now))
          served[r.window_of(now)] += kCost;
        else
          refused = true;
      }
      // The store answers at once (a Redis round trip is far below a step).
      if (auto a = r.ask(now, refused ? kCost : 0)) {
        std::int64_t& g = store[a->window];
        g += a->used;
        const std::int64_t grant = std::min(a->tokens, std::max<std::int64_t>(kLimit - g, 0));
        g += grant;
        r.granted(*a, grant, now);
      }
    }
  }
  for (const auto& [window, granted] : store) EXPECT_LE(granted, kLimit) << "window " << window;
  std::int64_t total = 0;
  int full = 0;
  for (const auto& [window, tokens] : served) {
    EXPECT_LE(tokens, kLimit);
    if (window > replicas[0].window_of(start) && window < replicas[0].window_of(start) + 4) {
      total += tokens;
      ++full;
    }
  }
  ASSERT_EQ(full, 3);
  EXPECT_GE(total, 3 * kLimit * 97 / 100) << "what the replicas hold unused at a window's end is a sliver";
}

}  // namespace
}  // namespace smartlb
