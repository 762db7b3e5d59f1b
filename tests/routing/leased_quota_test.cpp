#include "smartlb/routing/leased_quota.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace smartlb {
namespace leased_quota_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono;
using WallTime = routing::LeasedQuota::WallTime;

// 40 s into a minute window; with ten sub-windows of 6 s, 4 s into one (it ends at kStart + 2 s).
const WallTime kStart = WallTime(seconds(1'700'000'080));

// Ten sub-windows of 6 s a minute (fewer than the default, for round numbers).
routing::LeasedQuota quota(std::int64_t limit) {
  return routing::LeasedQuota({limit, minutes(1), milliseconds(500), 10, false, 10});
}

TEST(LeasedQuota, LocallyAReplicaHasItsShareOfEachSlidingWindow) {
  routing::LeasedQuota q = quota(900);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(200, kStart));
  EXPECT_TRUE(q.try_take(100, kStart));
  EXPECT_FALSE(q.try_take(1, kStart)) << "900 / 3 replicas";
  EXPECT_FALSE(q.ask(kStart)) << "nothing to ask a store that is lost";
  EXPECT_FALSE(q.try_take(1, kStart + seconds(20)))
      << "a new fixed window, but not a new share per sub-window";
  EXPECT_FALSE(q.try_take(1, kStart + seconds(61)))
      << "the sub-window of kStart is counted a window after its end";
  EXPECT_TRUE(q.try_take(300, kStart + seconds(62))) << "forgotten from the eleventh sub-window on";
}

TEST(LeasedQuota, LocallyWhatEachSubWindowTookIsForgottenInTurn) {
  routing::LeasedQuota q = quota(900);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(200, kStart));               // sub-window 0 (ends at kStart + 2 s)
  EXPECT_TRUE(q.try_take(100, kStart + seconds(3)));  // sub-window 1
  EXPECT_EQ(q.wait_for(150, kStart + seconds(3)), seconds(62) - seconds(3))
      << "once sub-window 0 is forgotten";
  EXPECT_EQ(q.wait_for(250, kStart + seconds(3)), seconds(68) - seconds(3)) << "once both are";
  EXPECT_EQ(q.wait_for(301, kStart + seconds(3)), seconds(68) - seconds(3))
      << "never: a whole window, finite";
  EXPECT_TRUE(q.try_take(200, kStart + seconds(62)));
  EXPECT_FALSE(q.try_take(1, kStart + seconds(62)));
}

TEST(LeasedQuota, OneSubWindowIsAFixedWindow) {
  routing::LeasedQuota::Options o{900, hours(24), milliseconds(500), 10};
  o.subwindows = 1;
  routing::LeasedQuota q(o);
  q.set_shared(false, 1);
  const WallTime day = WallTime(hours(24 * 19'000));
  EXPECT_EQ(q.subwindow_of(day + hours(23)), 19'000) << "the day's index";
  EXPECT_EQ(q.counted_from(19'000), 19'000);
  EXPECT_TRUE(q.try_take(900, day + hours(23)));
  EXPECT_FALSE(q.try_take(1, day + hours(23)));
  EXPECT_TRUE(q.try_take(900, day + hours(24))) << "a new day: nothing of the last one counts";
}

TEST(LeasedQuota, CalendarMonthsAreItsWindows) {
  routing::LeasedQuota::Options o{3000, hours(24 * 31), milliseconds(500), 10};
  o.calendar_months = true;
  routing::LeasedQuota q(o);
  q.set_shared(false, 3);
  const WallTime november = WallTime(sys_days(year(2026) / November / 25));
  EXPECT_EQ(q.subwindow_of(november), (2026 - 1970) * 12 + 10);
  EXPECT_EQ(q.subwindow_end(q.subwindow_of(november)), WallTime(sys_days(year(2026) / December / 1)));
  EXPECT_EQ(q.subwindows(), 1);
  EXPECT_TRUE(q.try_take(1000, november));
  EXPECT_FALSE(q.try_take(1, november + days(5))) << "the share of 3000 / 3 replicas, for the whole month";
  EXPECT_EQ(q.wait_for(1, november), WallTime(sys_days(year(2026) / December / 1)) - november);
  EXPECT_TRUE(q.try_take(1000, WallTime(sys_days(year(2026) / December / 1)))) << "a new month";
}

TEST(LeasedQuota, SharedItTakesOnlyWhatTheStoreGranted) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 3);
  EXPECT_FALSE(q.try_take(200, kStart)) << "no lease yet";
  const auto a = q.ask(kStart, 200);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->subwindow, q.subwindow_of(kStart));
  EXPECT_GE(a->tokens, 200);
  EXPECT_FALSE(q.ask(kStart, 200)) << "one ask at a time";
  q.granted(*a, 200, kStart);
  EXPECT_TRUE(q.try_take(200, kStart));
  EXPECT_FALSE(q.try_take(1, kStart));
}

// What a lower priority class checks its reserve against with several replicas: what the store
// left unheld at its last answer, plus what this replica holds and has not taken.
TEST(LeasedQuota, WhatIsLeftEverywhereIsTheStoresRestAndTheUnspentLease) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 2);
  EXPECT_FALSE(q.left_everywhere(kStart)) << "no answer yet";
  const auto a = q.ask(kStart, 1'000);
  ASSERT_TRUE(a);
  q.granted(*a, 1'000, kStart, 9'000);  // every replica holds or took 9,000 now, this one's 1,000 with it
  EXPECT_EQ(q.left_everywhere(kStart), 2'000);
  ASSERT_TRUE(q.try_take(400, kStart));
  EXPECT_EQ(q.left_everywhere(kStart), 1'600) << "what it takes of its lease is gone too";
  EXPECT_EQ(q.left_everywhere(kStart + seconds(8)), std::nullopt)
      << "an answer from before the last sub-window: not known (the others moved on)";
  q.adjust(q.subwindow_of(kStart), 1'000);  // its real cost: beyond the lease, not reported yet
  EXPECT_EQ(q.left_everywhere(kStart), 600) << "not in the store's count: it comes off too";
  q.set_shared(false, 2);
  EXPECT_EQ(q.left_everywhere(kStart), std::nullopt) << "local: nothing known of the others";
  q.set_shared(true, 2);
  EXPECT_EQ(q.left_everywhere(kStart), std::nullopt) << "the store is back: its count is to be learnt again";
}

// An hour's window has sub-windows of 72 s: "this sub-window or the last" would trust a count
// for up to 144 s while the other replicas move on. It is trusted for kCountFreshFor at most.
TEST(LeasedQuota, TheStoresCountIsTrustedForAMomentOnlyHoweverLongTheSubWindow) {
  routing::LeasedQuota q({10'000, hours(1), milliseconds(500), 10, false, 50});
  q.set_shared(true, 2);
  const WallTime at = q.subwindow_end(q.subwindow_of(kStart)) + seconds(1);  // 1 s into a sub-window
  const auto a = q.ask(at, 1'000);
  ASSERT_TRUE(a);
  q.granted(*a, 1'000, at, 9'000);
  EXPECT_EQ(q.left_everywhere(at + routing::LeasedQuota::kCountFreshFor), 2'000);
  EXPECT_EQ(q.left_everywhere(at + routing::LeasedQuota::kCountFreshFor + milliseconds(1)), std::nullopt)
      << "the same sub-window, but the count is stale";
  EXPECT_EQ(q.left_everywhere(at - milliseconds(1)), std::nullopt)
      << "a clock stepped back: its age is unknown";
  EXPECT_EQ(q.view().counted, 9'000) << "what /status shows (the last answer's, however old)";
}

// What a lower class leaves to the classes above covers their demand until the store gives room
// back: until the earliest sub-window it counts any of the window in stops counting.
TEST(LeasedQuota, TheStoreSaysWhenItGivesRoomBack) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 2);
  auto a = q.ask(kStart, 1'000);
  ASSERT_TRUE(a);
  q.granted(*a, 1'000, kStart, 9'000, a->subwindow - 3);  // the window's first grants, three sub-windows ago
  EXPECT_EQ(q.view().oldest_counted, a->subwindow - 3);
  EXPECT_EQ(q.until_store_release(kStart), seconds(44))
      << "counted with the ten sub-windows after it (6 s each): this one's last 2 s and seven more";
  EXPECT_EQ(q.until_store_release(kStart + seconds(1)), seconds(43));
  EXPECT_EQ(q.until_store_release(kStart + seconds(3)), std::nullopt) << "a stale count: not known";
  ASSERT_TRUE(q.try_take(1'000, kStart));
  a = q.ask(kStart, 1'000);
  ASSERT_TRUE(a);
  q.granted(*a, 0, kStart, 0, -1);
  EXPECT_EQ(q.until_store_release(kStart), std::nullopt) << "nothing counted: nothing to give back";

  routing::LeasedQuota fixed({10'000, minutes(1), milliseconds(500), 10, false, 1});
  fixed.set_shared(true, 2);
  a = fixed.ask(kStart, 1'000);
  ASSERT_TRUE(a);
  fixed.granted(*a, 1'000, kStart, 1'000, a->subwindow);
  EXPECT_EQ(fixed.until_store_release(kStart), seconds(20)) << "a fixed window gives all back at its end";
}

TEST(LeasedQuota, AnAnswerWithoutACountLeavesWhatIsLeftUnknown) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 2);
  const auto a = q.ask(kStart, 1'000);
  q.granted(*a, 1'000, kStart);
  EXPECT_EQ(q.left_everywhere(kStart), std::nullopt);
}

TEST(LeasedQuota, AsksAheadOfNeedAtHalfTheLastLease) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart);
  EXPECT_TRUE(q.try_take(400, kStart));
  EXPECT_FALSE(q.ask(kStart)) << "600 of 1000 left";
  EXPECT_TRUE(q.try_take(200, kStart));
  a = q.ask(kStart);
  ASSERT_TRUE(a) << "400 left: below half";
  EXPECT_EQ(a->subwindow, q.subwindow_of(kStart));
}

TEST(LeasedQuota, TheNextWindowsLeaseIsAskedBeforeItBegins) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart);
  const WallTime late = kStart + milliseconds(1'800);  // 200 ms before the sub-window ends
  EXPECT_FALSE(q.ask(late - milliseconds(100))) << "not yet: in the last half-horizon (250 ms)";
  const auto next = q.ask(late);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->subwindow, q.subwindow_of(kStart) + 1);
  q.granted(*next, 500, late);
  EXPECT_TRUE(q.try_take(500, kStart + seconds(2)))
      << "the first request of the new sub-window finds its lease";
  EXPECT_FALSE(q.try_take(1, kStart + seconds(2))) << "the last sub-window's lease is not valid in this one";
}

TEST(LeasedQuota, WhatASubWindowLeftUnusedGoesBackToTheStoreOnce) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart);
  EXPECT_TRUE(q.try_take(400, kStart));
  const WallTime late = kStart + milliseconds(1'800);
  a = q.ask(late);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->returned, 0) << "the sub-window has not ended: its lease may still be taken from";
  q.granted(*a, 1000, late);  // the next sub-window's lease
  const WallTime next = kStart + seconds(2);
  a = q.ask(next);
  ASSERT_TRUE(a) << "no lease is due, but the leftover goes back";
  EXPECT_EQ(a->subwindow, q.subwindow_of(next));
  EXPECT_EQ(a->tokens, 0);
  EXPECT_EQ(a->returned_subwindow, q.subwindow_of(kStart));
  EXPECT_EQ(a->returned, 600);
  q.granted(*a, 0, next);
  EXPECT_TRUE(q.try_take(1000, next)) << "asking for nothing is not the store saying it is spent";
  a = q.ask(next);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->returned, 0) << "returned once";
}

TEST(LeasedQuota, AGrantForAWindowAlreadyGoneIsVoid) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  const auto a = q.ask(kStart, 100);
  q.granted(*a, 1000, kStart + seconds(25));
  EXPECT_FALSE(q.try_take(100, kStart + seconds(25)));
}

TEST(LeasedQuota, BackToSharedItReportsWhatItTookLocally) {
  routing::LeasedQuota q = quota(9000);
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

TEST(LeasedQuota, BackToSharedItReportsWhatItTookInTheEarlierSubWindowsStillCounted) {
  routing::LeasedQuota q = quota(9000);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(2500, kStart - seconds(56)));  // before the window of kStart + 10 s
  EXPECT_TRUE(q.try_take(500, kStart));
  q.set_shared(true, 3);
  const WallTime later = kStart + seconds(10);  // two sub-windows on
  const auto a = q.ask(later);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->subwindow, q.subwindow_of(later));
  EXPECT_EQ(a->used, 500) << "counted in the asked sub-window: the store then counts it a window on";
  EXPECT_EQ(a->earlier, 500);
  q.granted(*a, 300, later);
  EXPECT_TRUE(q.try_take(300, later));
  EXPECT_FALSE(q.try_take(1, later)) << "an earlier sub-window's report is no room in this one";
  const auto b = q.ask(later);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->used, 0) << "reported once";
}

TEST(LeasedQuota, AdjustMovesOnlyTheLocalCount) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  const auto a = q.ask(kStart, 300);
  q.granted(*a, 300, kStart);
  EXPECT_TRUE(q.try_take(300, kStart));
  q.adjust(q.subwindow_of(kStart), -200);  // the answer used 100
  EXPECT_TRUE(q.try_take(200, kStart));
}

routing::LeasedQuota bridged(std::int64_t limit) {
  routing::LeasedQuota::Options o{limit, minutes(1), milliseconds(500), 10, true, 10};
  return routing::LeasedQuota(o);
}

TEST(LeasedQuota, BridgedItTakesALeasesWorthBeforeTheStoresFirstAnswerAndReportsIt) {
  routing::LeasedQuota q = bridged(9000);
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
  routing::LeasedQuota q = bridged(300);
  q.set_shared(true, 3);
  EXPECT_FALSE(q.try_take(200, kStart)) << "100 is the share";
  EXPECT_TRUE(q.try_take(100, kStart));
}

TEST(LeasedQuota, BridgedAStoreThatGrantsNothingStopsTheCredit) {
  routing::LeasedQuota q = bridged(9000);
  q.set_shared(true, 3);
  const auto a = q.ask(kStart, 100);
  q.granted(*a, 0, kStart);
  EXPECT_FALSE(q.try_take(100, kStart));
  EXPECT_EQ(q.wait_for(100, kStart), seconds(2)) << "spent: until the sub-window ends";
}

TEST(LeasedQuota, BridgedBackToSharedTheCreditStartsAgainAfterTheLocalTakes) {
  routing::LeasedQuota q = bridged(9000);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.try_take(2000, kStart));
  q.set_shared(true, 3);
  EXPECT_TRUE(q.try_take(200, kStart)) << "the store returned: no refusal while the first ask is out";
  const auto a = q.ask(kStart);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->used, 2200);
}

TEST(LeasedQuota, BridgedNoCreditWhileTheQuotaIsContested) {
  routing::LeasedQuota q = bridged(9000);
  q.set_shared(true, 3);
  auto a = q.ask(kStart, 200);
  q.granted(*a, 100, kStart);  // less than asked: spent
  const WallTime next = kStart + seconds(2);
  EXPECT_FALSE(q.try_take(200, next))
      << "a new sub-window without an answer, but the one before was spent: no credit";
  const WallTime window_later = kStart + seconds(2 + 60);
  EXPECT_TRUE(q.try_take(200, window_later)) << "a window on, the spent sub-window no longer counts";
}

TEST(LeasedQuota, InTheLastHalfHorizonTheNextLeaseGoesBeforeMoreOfTheCurrentOne) {
  routing::LeasedQuota q = quota(10'000);
  q.set_shared(true, 1);
  auto a = q.ask(kStart, 100);
  q.granted(*a, 200, kStart);
  EXPECT_TRUE(q.try_take(200, kStart));
  const WallTime late = kStart + milliseconds(1'800);
  a = q.ask(late, 200);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->subwindow, q.subwindow_of(kStart) + 1)
      << "the current sub-window is short, but the next goes first";
  q.granted(*a, 400, late);
  a = q.ask(late, 200);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->subwindow, q.subwindow_of(kStart)) << "then the current one's";
}

TEST(LeasedQuota, FitsAndWaitForTakeNothing) {
  routing::LeasedQuota q = quota(900);
  q.set_shared(false, 3);
  EXPECT_TRUE(q.fits(300, kStart));
  EXPECT_FALSE(q.fits(301, kStart));
  EXPECT_TRUE(q.try_take(300, kStart));
  EXPECT_FALSE(q.fits(1, kStart));
  EXPECT_EQ(q.wait_for(1, kStart), seconds(62)) << "local and spent: until its sub-window is forgotten";
  EXPECT_EQ(q.wait_for(0, kStart), seconds(0));
  q.set_shared(true, 3);
  EXPECT_EQ(q.wait_for(1, kStart), milliseconds(500)) << "a lease is on its way";
}

// Three replicas and a store that grants what leaves the last window's sub-windows (and any
// counted ahead) within the limit, as the Redis script does, answering `delay_steps` steps of
// 10 ms after an ask (0: at once). Under 120 % of the quota spread 3:1:1, no interval of a
// window's length -- aligned or not -- may ever get more than the limit, and nearly all of it
// should be used.
struct SharedRun {
  std::int64_t busiest = 0;        // tokens served in the busiest interval of a window's length
  std::int64_t after_first = 0;    // tokens served after the first window
  std::int64_t over_in_store = 0;  // the most any k + 1 sub-windows counted beyond the limit
};

// A replica asks when a request comes, and otherwise on its tick, every `tick_steps` steps (the
// broker's 100 ms tick is 10).
SharedRun run_three_replicas(std::int64_t limit, bool bridge, int delay_steps, int tick_steps = 1) {
  constexpr std::int64_t kCost = 200;
  constexpr int kWindows = 6;
  routing::LeasedQuota::Options o{limit, minutes(1), milliseconds(500), 10};  // the default sub-windows
  o.bridge = bridge;
  std::array<routing::LeasedQuota, 3> replicas = {routing::LeasedQuota(o), routing::LeasedQuota(o),
                                                  routing::LeasedQuota(o)};
  for (auto& r : replicas) r.set_shared(true, 3);
  const std::int64_t k = replicas[0].subwindows();
  std::map<std::int64_t, std::int64_t> store;  // sub-window -> counted
  struct Answer {
    int due;
    std::size_t replica;
    routing::LeasedQuota::Ask ask;
    std::int64_t tokens;
  };
  std::vector<Answer> answers;
  std::vector<std::pair<WallTime, std::int64_t>> served;
  std::mt19937 rng(7);
  const double share[3] = {0.6, 0.2, 0.2};
  const double per_step = 1.2 * static_cast<double>(limit) / 60.0 / 100.0 / kCost;  // requests per 10 ms
  const WallTime start = WallTime(minutes(28'333'334));                             // a window boundary
  const auto store_answers = [&](const routing::LeasedQuota& r, const routing::LeasedQuota::Ask& a) {
    if (a.returned > 0) {
      std::int64_t& back = store[a.returned_subwindow];
      back -= std::min(a.returned, back);
    }
    store[a.subwindow] += a.used;
    std::int64_t counted = 0;
    for (auto it = store.lower_bound(r.counted_from(a.subwindow)); it != store.end(); ++it)
      counted += it->second;
    const std::int64_t grant = std::min(a.tokens, std::max<std::int64_t>(limit - counted, 0));
    store[a.subwindow] += grant;
    return grant;
  };
  for (int step = 0; step < kWindows * 6000; ++step) {
    const WallTime now = start + milliseconds(10 * step);
    for (auto it = answers.begin(); it != answers.end();)
      if (it->due <= step) {
        replicas[it->replica].granted(it->ask, it->tokens, now);
        it = answers.erase(it);
      } else {
        ++it;
      }
    for (std::size_t i = 0; i < 3; ++i) {
      routing::LeasedQuota& r = replicas[i];
      const bool arrives = std::uniform_real_distribution<>(0, 1)(rng) < per_step * share[i];
      bool refused = false;
      if (arrives) {
        if (r.try_take(kCost, now))
          served.emplace_back(now, kCost);
        else
          refused = true;
      }
      if (!arrives && step % tick_steps != 0) continue;
      if (auto a = r.ask(now, refused ? kCost : 0)) {
        // The store applies the ask when it gets it; the answer comes back later.
        const std::int64_t grant = store_answers(r, *a);
        if (delay_steps == 0)
          r.granted(*a, grant, now);
        else
          answers.push_back({step + delay_steps, i, *a, grant});
      }
    }
  }
  SharedRun run;
  for (const auto& [window, counted] : store) {
    std::int64_t sum = 0;
    for (std::int64_t w = window - k; w <= window; ++w) sum += store.count(w) ? store.at(w) : 0;
    run.over_in_store = std::max(run.over_in_store, sum - limit);
  }
  // Every interval [t, t + W) that begins at a served request's time: the busiest ones.
  std::int64_t in = 0;
  for (std::size_t b = 0, e = 0; b < served.size(); in -= served[b++].second) {
    for (; e < served.size() && served[e].first < served[b].first + minutes(1); ++e) in += served[e].second;
    run.busiest = std::max(run.busiest, in);
  }
  for (const auto& [t, tokens] : served)
    if (t >= start + minutes(1)) run.after_first += tokens;
  return run;
}

TEST(LeasedQuota, ThreeReplicasTogetherKeepToTheLimitInAnyIntervalAndUseNearlyAllOfIt) {
  constexpr std::int64_t kLimit = 60'000;  // per minute: 1000 tokens/s
  const std::pair<int, int> cases[] = {{0, 1}, {1, 1}, {3, 1}, {1, 10}, {3, 10}};  // answer delay, tick
  for (const bool bridge : {false, true})
    for (const auto& [delay, tick] : cases) {
      SCOPED_TRACE(::testing::Message()
                   << "bridge " << bridge << ", answers after " << delay << " steps, a tick every " << tick);
      const SharedRun run = run_three_replicas(kLimit, bridge, delay, tick);
      EXPECT_LE(run.over_in_store, 0) << "the store never counts more than the limit";
      EXPECT_LE(run.busiest, kLimit) << "no interval of a window's length gets more than the limit";
      EXPECT_GE(run.busiest, kLimit * 90 / 100);
      EXPECT_GE(run.after_first, 5 * kLimit * 93 / 100)
          << "the store counts a sub-window for a whole window after it ends (1 / (k + 1) of the limit "
             "in steady overload); what the leases left unused went back";
    }
}

}  // namespace leased_quota_test
}  // namespace smartlb
