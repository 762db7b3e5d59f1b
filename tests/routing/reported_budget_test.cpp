// ReportedBudget: what a backend says remains of its rate limit, minus what smartlb sent since,
// plus what it has learned comes back; a short report confirms "no room" only while fresh.
#include "smartlb/routing/reported_budget.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace reported_budget_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using Room = routing::ReportedBudget::Room;

constexpr base::MonoNanos kSec = 1'000'000'000;
constexpr base::MonoNanos kMs = 1'000'000;
constexpr base::MonoNanos kFresh = routing::ReportedBudget::kFreshFor.count();

routing::RateLimitReport tokens_left(std::int64_t tokens, std::int64_t requests = 1'000) {
  routing::RateLimitReport r;
  r.remaining_tokens = tokens;
  r.remaining_requests = requests;
  return r;
}

TEST(ReportedBudget, PlentifulReports_AreNotWatchedAndCostNothing) {
  routing::ReportedBudget b;
  EXPECT_EQ(b.observe(tokens_left(100'000, 500), 0, {}), 0);
  EXPECT_FALSE(b.watched());
  EXPECT_TRUE(b.fits(1'000'000, 0)) << "a plentiful report never limits";
  const auto mark = b.charge(200);
  EXPECT_EQ(mark.tokens, 0) << "nothing is counted while nothing is low";
  EXPECT_EQ(mark.requests, 0);
}

TEST(ReportedBudget, ShortReport_ConfirmsNoRoomOnlyWhileFresh_ThenMayBeProbed) {
  routing::ReportedBudget b;
  EXPECT_EQ(b.observe(tokens_left(150), 5 * kSec, {}), +1);
  EXPECT_TRUE(b.watched());
  EXPECT_EQ(b.room(150, 5 * kSec), Room::Fits);
  EXPECT_EQ(b.room(151, 5 * kSec), Room::Confirmed);
  EXPECT_EQ(b.room(200, 5 * kSec + kFresh - 1), Room::Confirmed);
  EXPECT_EQ(b.room(200, 5 * kSec + kFresh), Room::Probe) << "the backend may have refilled by now: test it";
  EXPECT_EQ(b.room(200, 5 * kSec + 3600 * kSec), Room::Probe) << "never a skip for a window";
}

TEST(ReportedBudget, OneProbeAtATime_AtMostOnePerFreshPeriod) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 0, {});
  const base::MonoNanos t = kFresh;
  EXPECT_EQ(b.next_chance(200, t), t);
  EXPECT_TRUE(b.claim_probe(t));
  EXPECT_FALSE(b.claim_probe(t)) << "one request tests it, not a flood";
  EXPECT_FALSE(b.claim_probe(t + kFresh - 1));
  EXPECT_EQ(b.next_chance(200, t + 10 * kMs), t + kFresh);
  EXPECT_TRUE(b.claim_probe(t + kFresh)) << "no answer yet: another may go";
}

TEST(ReportedBudget, NextChance_IsTheEndOfTheFreshPeriodWithoutAnythingLearned) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 2 * kSec, {});
  EXPECT_EQ(b.next_chance(200, 2 * kSec + 100 * kMs), 2 * kSec + kFresh);
  EXPECT_EQ(b.back_at(200, 2 * kSec + 100 * kMs), 2 * kSec + kFresh)
      << "nothing predicts it: the fresh period";
}

TEST(ReportedBudget, UnknownCost_NeedsAtLeastOneToken) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 0, {});
  EXPECT_EQ(b.room(0, 0), Room::Confirmed);
}

TEST(ReportedBudget, OwnSendsSinceTheReport_AreSubtracted) {
  routing::ReportedBudget b;
  b.observe(tokens_left(500), 0, b.charge(200));
  const auto first = b.charge(200);  // a burst: both leave before another report arrives
  EXPECT_TRUE(b.fits(200, 1));
  b.charge(200);
  EXPECT_FALSE(b.fits(200, 1)) << "500 - 2 x 200 = 100 left";
  EXPECT_EQ(b.view().tokens_left, 100);
  // The first one's answer: 300 left after it; the second is still counted against that.
  b.observe(tokens_left(300), 1, first);
  EXPECT_EQ(b.view().tokens_left, 100);
}

TEST(ReportedBudget, ZeroRequestsLeft_IsShortWhateverTheTokens) {
  routing::ReportedBudget b;
  b.observe(tokens_left(100'000, 0), 0, {});
  EXPECT_TRUE(b.watched());
  EXPECT_EQ(b.room(1, 0), Room::Confirmed);
  EXPECT_EQ(b.room(1, kFresh), Room::Probe);
}

TEST(ReportedBudget, ResetHints_FitOnceThatTimeHasCome) {
  routing::ReportedBudget b;
  routing::RateLimitReport r = tokens_left(10, 0);
  r.reset_tokens = 6000ms;
  r.reset_requests = 20ms;
  b.observe(r, kSec, {});
  EXPECT_EQ(b.back_at(5, kSec), kSec + 20 * kMs) << "only the request limit holds 5 tokens back";
  EXPECT_EQ(b.back_at(50, kSec), kSec + routing::ReportedBudget::kMaxFresh.count())
      << "tested long before 6 s";
  EXPECT_EQ(b.room(5, kSec + 20 * kMs), Room::Fits) << "the backend said its requests would be back by then";
  EXPECT_EQ(b.room(50, kSec + 20 * kMs), Room::Confirmed);
  EXPECT_EQ(b.room(50, 7 * kSec), Room::Fits);
}

TEST(ReportedBudget, AResetOfZeroBesideNothingLeft_IsNoHint) {
  routing::ReportedBudget b;
  routing::RateLimitReport r = tokens_left(0);
  r.reset_tokens = 0ms;  // as Azure's Responses API was seen to answer
  b.observe(r, kSec, {});
  EXPECT_EQ(b.room(200, kSec), Room::Confirmed);
}

TEST(ReportedBudget, NegativeAndGarbageReports_AreUnknownNotEmpty) {
  for (const std::string_view junk : {"-1", "-5000", "abc", "", "1e400", "nan"}) {
    http::ThrottleHeaders h;
    h.remaining_tokens = junk;
    h.remaining_requests = junk;
    const routing::RateLimitReport r = routing::parse_rate_limit_report(h);
    EXPECT_TRUE(r.empty()) << junk;
    routing::ReportedBudget b;
    EXPECT_EQ(b.observe(r, 0, {}), 0) << junk;
    EXPECT_TRUE(b.fits(200, 0)) << junk << " means unknown, not empty";
  }
  http::ThrottleHeaders h;  // one usable limit is still read
  h.remaining_tokens = "-1";
  h.remaining_requests = "3";
  const routing::RateLimitReport r = routing::parse_rate_limit_report(h);
  EXPECT_FALSE(r.remaining_tokens.has_value());
  EXPECT_EQ(r.remaining_requests, 3);
}

// A token bucket at 1,000 tokens/s, kept empty: each report says 0 after smartlb sent 100
// more every 100 ms, so 100 came back each time (the first report: plentiful, the most it ever had).
// Returns when the last report's request left.
base::MonoNanos keep_empty(routing::ReportedBudget& b) {
  b.observe(tokens_left(100'000, 1'000), -kSec, {});
  base::MonoNanos t = 0;
  b.observe(tokens_left(0), t, b.charge(100));
  for (int i = 0; i < 20; ++i) {
    t += 100 * kMs;
    b.observe(tokens_left(0), t, b.charge(100));
  }
  return t;
}

TEST(ReportedBudget, LearnsAContinuousRefill_FromSuccessiveReports) {
  routing::ReportedBudget b;
  const base::MonoNanos t = keep_empty(b);
  EXPECT_NEAR(b.view().tokens_per_second, 1'000, 1);
  EXPECT_EQ(b.room(100, t + 50 * kMs), Room::Confirmed) << "fresh, and only 50 back yet";
  EXPECT_EQ(b.room(100, t + 100 * kMs), Room::Probe)
      << "by the learned refill it is back, before the fresh period ends";
  EXPECT_NEAR(static_cast<double>(b.back_at(100, t)), static_cast<double>(t + 100 * kMs), 1e3);
  EXPECT_NEAR(static_cast<double>(b.next_chance(100, t)), static_cast<double>(t + 100 * kMs), 1e3);
}

TEST(ReportedBudget, AReportAnotherReplicaRead_SaysWhatIsLeftNow) {
  routing::ReportedBudget b;
  EXPECT_EQ(b.observe(tokens_left(5'000), 0, {}), +1);
  b.charge(1'000);  // this replica's send, which the other replica's report already counts
  // The other replica's request left after it: 300 left by the backend's word, all sends in it.
  EXPECT_EQ(b.observe_shared(tokens_left(300), 10 * kMs), 0);
  EXPECT_EQ(b.view().tokens_left, 300);
  EXPECT_EQ(b.room(301, 10 * kMs), Room::Confirmed) << "without it, this replica would see 4,000";
  b.charge(200);
  EXPECT_EQ(b.view().tokens_left, 100) << "this replica's sends since count as they do after its own";
  EXPECT_EQ(b.observe_shared(tokens_left(4'000), 5 * kMs), 0);
  EXPECT_EQ(b.view().tokens_left, 100) << "older than the report taken: ignored";
  EXPECT_EQ(b.observe_shared(tokens_left(100'000), 20 * kMs), -1) << "plenty again: not watched";
}

TEST(ReportedBudget, AReportAnotherReplicaRead_TeachesNoRefill) {
  // The refill is learnt from this replica's own reports: between two of them it knows every
  // send. Shared reports in between change nothing of it.
  routing::ReportedBudget b;
  b.observe(tokens_left(100'000, 1'000), -kSec, {});
  base::MonoNanos t = 0;
  b.observe(tokens_left(0), t, b.charge(100));
  for (int i = 0; i < 20; ++i) {
    t += 100 * kMs;
    b.observe_shared(tokens_left(500), t - 50 * kMs);  // would be a refill of 500 in 50 ms
    b.observe(tokens_left(0), t, b.charge(100));
  }
  EXPECT_NEAR(b.view().tokens_per_second, 1'000, 1);
}

TEST(ReportedBudget, AFixedWindowsJump_IsNotARate) {
  // A fixed window: nothing comes back within it, then all of it at once.
  routing::ReportedBudget b;
  b.observe(tokens_left(5'000), 0, b.charge(200));
  b.observe(tokens_left(100), 500 * kMs, b.charge(200));      // spent by others too: no refill
  b.observe(tokens_left(4'800), 1'020 * kMs, b.charge(200));  // the next window
  b.observe(tokens_left(0), 1'800 * kMs, b.charge(200));
  EXPECT_EQ(b.view().tokens_per_second, 0) << "a jump spread as a rate would promise room mid-window";
  EXPECT_EQ(b.back_at(200, 1'900 * kMs), 1'800 * kMs + kFresh);
  EXPECT_EQ(b.room(200, 1'900 * kMs), Room::Confirmed);
}

TEST(ReportedBudget, SomeoneElsesSpending_NeverCountsAsANegativeRefill) {
  routing::ReportedBudget b;
  b.observe(tokens_left(5'000), 0, {});
  b.observe(tokens_left(3'000), 100 * kMs, b.charge(10));  // 1,990 taken by another client
  b.observe(tokens_left(3'090), 200 * kMs, b.charge(10));  // 100 back
  EXPECT_NEAR(b.view().tokens_per_second, 509, 1)
      << "(0 + 100) back over 200 ms (the older sample decayed a little)";
}

TEST(ReportedBudget, NoPrediction_HoldsATargetLongerThanMaxFresh) {
  routing::ReportedBudget b;
  b.observe(tokens_left(100'000, 1'000), 0, {});
  b.observe(tokens_left(0), kSec, b.charge(200));
  for (int i = 1; i <= 10; ++i)
    b.observe(tokens_left(0), kSec + i * 100 * kMs, b.charge(1));  // 1 back in 100 ms
  const base::MonoNanos at = 2 * kSec;
  EXPECT_LT(b.view().tokens_per_second, 11);
  EXPECT_EQ(b.back_at(200, at), at + routing::ReportedBudget::kMaxFresh.count())
      << "a slow refill predicts 20 s";
}

TEST(ReportedBudget, ProbeAnswered_FreesTheNextProbeAtOnce) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 0, {});
  ASSERT_TRUE(b.claim_probe(kFresh));
  b.observe(tokens_left(0), kFresh, b.charge(200));  // the probe's answer: still nothing
  EXPECT_EQ(b.room(200, kFresh + 10 * kMs), Room::Confirmed) << "its report is the fresh one now";
  EXPECT_TRUE(b.claim_probe(2 * kFresh)) << "not held by the first probe's time";
}

TEST(ReportedBudget, ARefusedRequest_GivesItsCostBack) {
  routing::ReportedBudget b;
  b.observe(tokens_left(100'000, 1'000), 0, {});
  b.observe(tokens_left(600), 10 * kMs, {});
  const auto refused = b.charge(200);
  EXPECT_EQ(b.view().tokens_left, 400);
  b.observe(tokens_left(600), 40 * kMs, refused, /*taken=*/false);
  EXPECT_EQ(b.view().tokens_left, 600) << "the backend spent nothing on it";
  EXPECT_EQ(b.view().tokens_per_second, 0) << "and nothing came back: no refill learned";
}

TEST(ReportedBudget, A429sRetryAfter_EndsTheConfirmation) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 0, {});
  b.retry_at(40 * kMs);
  EXPECT_EQ(b.room(200, 39 * kMs), Room::Confirmed);
  EXPECT_EQ(b.room(200, 40 * kMs), Room::Probe) << "the backend named that moment";
  EXPECT_TRUE(b.retry_passed(40 * kMs));
  b.observe(tokens_left(0), 50 * kMs, b.charge(200));  // a request sent after it: the next report
  EXPECT_EQ(b.room(200, 60 * kMs), Room::Confirmed);
  EXPECT_TRUE(b.retry_passed(60 * kMs)) << "the backend's own time stays passed";
}

TEST(ReportedBudget, AJumpingLimitersBoundaries_AreLearnedFrom429s) {
  // A fixed window of 1 s ending at whole seconds (+ 0.3): two 429s name two boundaries.
  routing::ReportedBudget b;
  b.retry_at(1'300 * kMs);
  b.retry_at(1'302 * kMs);  // the same one, seen by a crossing answer
  b.retry_at(3'300 * kMs);  // a window passed without a 429: the period divides the gap
  b.retry_at(4'300 * kMs);
  b.observe(tokens_left(0), 5'000 * kMs, {});
  EXPECT_EQ(b.back_at(200, 5'000 * kMs), 5'300 * kMs) << "the next boundary, not the fresh period";
  b.observe(tokens_left(0), 5'310 * kMs, {});
  EXPECT_EQ(b.back_at(200, 5'310 * kMs), 5'310 * kMs + routing::ReportedBudget::kMaxFresh.count())
      << "never longer than kMaxFresh on a guess";
}

TEST(ReportedBudget, AnOlderAnswer_DoesNotOverwriteANewerReport) {
  routing::ReportedBudget b;
  b.observe(tokens_left(100), 2 * kSec, {});
  EXPECT_EQ(b.observe(tokens_left(90'000), 1 * kSec, {}), 0);
  EXPECT_TRUE(b.watched());
  EXPECT_FALSE(b.fits(200, 2 * kSec));
}

TEST(ReportedBudget, APlentifulReport_EndsTheWatch) {
  routing::ReportedBudget b;
  b.observe(tokens_left(10), 0, {});
  EXPECT_EQ(b.observe(tokens_left(90'000, 900), 10 * kMs, {}), -1);
  EXPECT_FALSE(b.watched());
  EXPECT_TRUE(b.fits(50'000, 10 * kMs));
}

TEST(ReportedBudget, RequestsOnlyReports_AreEnough) {
  routing::ReportedBudget b;
  routing::RateLimitReport r;
  r.remaining_requests = 1;
  b.observe(r, 0, b.charge(0));
  EXPECT_TRUE(b.fits(1'000'000, 0)) << "no token report: only the request count limits";
  b.charge(0);
  EXPECT_EQ(b.room(1, 0), Room::Confirmed);
}

// Some answers report -1 (or nothing) where others report: an answer without a report says
// only that its request was taken, or refused.
TEST(ReportedBudget, AnAnswerWithoutAReport_TakenWhereTheReportLeftNoRoom_MakesTheReportStale) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 0, {});
  ASSERT_TRUE(b.claim_probe(kFresh));
  EXPECT_EQ(b.observe({}, kFresh, b.charge(200)), -1) << "the backend had room the report did not show";
  EXPECT_FALSE(b.watched());
  EXPECT_EQ(b.room(200, kFresh + kMs), Room::Fits) << "nothing known until the next report";
}

TEST(ReportedBudget, AnAnswerWithoutAReport_TakenWithinTheReportsRoom_ChangesNothing) {
  routing::ReportedBudget b;
  b.observe(tokens_left(500), 0, {});
  EXPECT_EQ(b.observe({}, kMs, b.charge(200)), 0);
  EXPECT_EQ(b.view().tokens_left, 300);
}

TEST(ReportedBudget, AnAnswerWithoutAReport_TakenWithinTheLearnedRefill_LeavesTheReportStanding) {
  // The bucket kept empty: a probe 100 ms after the last report, answered without one (half the answers of
  // some deployments report -1): the 100 it took had come back, as learned.
  routing::ReportedBudget b;
  const base::MonoNanos t = keep_empty(b);
  ASSERT_EQ(b.room(100, t + 100 * kMs), Room::Probe);
  ASSERT_TRUE(b.claim_probe(t + 100 * kMs));
  EXPECT_EQ(b.observe({}, t + 100 * kMs, b.charge(100)), 0);
  EXPECT_TRUE(b.watched()) << "the report and its refill still describe the limiter";
  EXPECT_EQ(b.room(100, t + 150 * kMs), Room::Confirmed) << "what came back was taken";
  EXPECT_TRUE(b.claim_probe(t + 200 * kMs)) << "the probe had its answer";
  EXPECT_EQ(b.room(100, t + 200 * kMs), Room::Probe) << "and the next 100 is back by then";
}

TEST(ReportedBudget, AnAnswerWithoutAReport_AsABorneOutRefillForetold_HoldsTheTargetPastMaxFresh) {
  // The bucket kept empty (every refill as its rate foretold), then a probe answered without a
  // report: where half the answers report -1 a report stands long, and a probe at its kMaxFresh,
  // where the refill says a large request is not back yet, would be refused.
  routing::ReportedBudget b;
  const base::MonoNanos t = keep_empty(b);
  ASSERT_TRUE(b.claim_probe(t + 100 * kMs));
  b.observe({}, t + 100 * kMs, b.charge(100));
  EXPECT_EQ(b.room(1'000, t + 550 * kMs), Room::Confirmed) << "450 back of 1,000: no probe yet";
  EXPECT_EQ(b.room(1'000, t + 650 * kMs), Room::Probe) << "no later than kMaxFresh after the answer";
}

TEST(ReportedBudget, AnAnswerWithoutAReport_WhereTheRefillComesInBursts_HoldsNothingPastMaxFresh) {
  // Refills of 300 and 0 in turn (a sliding window's echo): the learned rate is an average that
  // its samples do not bear out, so kMaxFresh after the report a probe tests the target.
  routing::ReportedBudget b;
  b.observe(tokens_left(100'000, 1'000), -kSec, {});
  base::MonoNanos t = 0;
  b.observe(tokens_left(0), t, b.charge(100));
  for (int i = 1; i <= 20; ++i) {
    t += 100 * kMs;
    b.observe(tokens_left(i % 2 ? 200 : 0), t, b.charge(100));
  }
  ASSERT_TRUE(b.claim_probe(t + 100 * kMs));
  b.observe({}, t + 100 * kMs, b.charge(100));
  EXPECT_EQ(b.room(1'000, t + 450 * kMs), Room::Confirmed) << "the refill says not yet";
  EXPECT_EQ(b.room(1'000, t + 550 * kMs), Room::Probe) << "kMaxFresh after the report";
}

TEST(ReportedBudget, AnAnswerWithoutAReport_WhereOtherReplicasSend_MakesTheReportStale) {
  // As above, but another replica has shared a report of this deployment: its sends take from
  // the same refill, uncounted here, so what came back is no room of this replica's own.
  routing::ReportedBudget b;
  const base::MonoNanos t = keep_empty(b);
  b.observe_shared(tokens_left(0), t + 10 * kMs);
  ASSERT_TRUE(b.claim_probe(t + 110 * kMs));
  EXPECT_EQ(b.observe({}, t + 110 * kMs, b.charge(100)), -1);
  EXPECT_FALSE(b.watched()) << "nothing is known until the next report";
}

TEST(ReportedBudget, A429WithoutAReport_AnswersTheProbe) {
  routing::ReportedBudget b;
  b.observe(tokens_left(0), 0, {});
  ASSERT_TRUE(b.claim_probe(kFresh));
  b.observe({}, kFresh, b.charge(200), /*taken=*/false);
  EXPECT_TRUE(b.claim_probe(kFresh + kMs)) << "its answer came: the next need not wait 250 ms";
  EXPECT_EQ(b.view().tokens_left, 0) << "and the report still stands";
}

// Blind: a deployment whose every report is -1 (parsed as nothing). `send` is a request of 200
// tokens sent at `t_ms`, taken (a 200) or refused (a 429 naming `retry_ms`, when given).
struct Blind {
  routing::ReportedBudget b;
  int send(base::MonoNanos t_ms, bool taken, base::MonoNanos retry_ms = 0) {
    const int change = b.observe({}, t_ms * kMs, b.charge(200), taken);
    if (retry_ms) b.retry_at(retry_ms * kMs);
    return change;
  }
};

// A 1 s sliding window: after a first 429, twelve requests are taken; then 429s name the
// moments the first five leave (sent + 1 s), which teaches the window; then a 429 sent at
// 1.375 s names 1.380 s, the moment the send of 0.380 s leaves.
void learn_and_fill(Blind& s) {
  s.send(0, false, 1'000);
  for (base::MonoNanos t : {10, 70, 160, 230, 310, 380, 460, 540, 610, 700, 760, 830}) s.send(t, true);
  for (base::MonoNanos t : {10, 70, 160, 230, 310}) s.send(1'000 + t - 5, false, 1'000 + t);
  s.send(1'375, false, 1'380);
}

TEST(ReportedBudget, Blind_A429WithoutReports_CountsTheSendsButHoldsNothingBeforeAWindowIsLearned) {
  Blind s;
  EXPECT_FALSE(s.b.watched());
  EXPECT_EQ(s.send(0, false, 40), +1);
  EXPECT_TRUE(s.b.watched()) << "its sends are counted: the echo is learned from them";
  EXPECT_FALSE(s.b.models_room()) << "a cooldown's floor still holds it";
  EXPECT_EQ(s.b.room(200, 50 * kMs), Room::Fits) << "nothing learned: cooldowns only, as with reports off";
  EXPECT_EQ(s.b.charge(200).own_requests, 1);
}

TEST(ReportedBudget, Blind_TheSendsBeforeItsFirst429_TeachTheWindowAtTheFirst429s) {
  // Nothing watched yet: the daemon estimates nothing (cost 0) and counts nothing, but where
  // nothing was ever reported, each send the backend took is remembered. A sliding window's
  // first 429s name the moments those sends leave it: the window is learned from them, not a
  // window later from the sends counted after the first 429.
  Blind s;
  for (base::MonoNanos t : {10, 70, 160, 230, 310, 380, 460, 540, 610, 700, 760, 830})
    EXPECT_EQ(s.b.observe({}, t * kMs, s.b.charge(0)), 0);
  EXPECT_FALSE(s.b.watched()) << "nothing counted: nothing watched";
  // Each 429 names the moment a first send leaves; a request taken just after it.
  for (base::MonoNanos t : {10, 70, 160, 230, 310}) {
    s.send(1'000 + t - 5, false, 1'000 + t);
    s.send(1'000 + t + 2, true);
  }
  s.send(1'375, false, 1'380);
  EXPECT_TRUE(s.b.models_room()) << "the window is learned";
  EXPECT_EQ(s.b.room(200, 1'376 * kMs), Room::Confirmed) << "the 429 left nothing";
  EXPECT_EQ(s.b.room(200, 1'380 * kMs), Room::Probe) << "the send of 0.380 s left the window";
}

TEST(ReportedBudget, AReportedDeployment_RemembersNoSendItDidNotCount) {
  // Reports came (plentiful): their deployment's sends are remembered only once watched, as
  // before (observe's low-report path keeps the ones a first low report's answer names).
  Blind s;
  s.b.observe(tokens_left(100'000, 1'000), 0, {});
  for (base::MonoNanos t : {10, 70, 160, 230, 310, 380}) s.b.observe({}, t * kMs, s.b.charge(0));
  for (base::MonoNanos t : {10, 70, 160, 230, 310}) s.send(1'000 + t - 5, false, 1'000 + t);
  s.send(1'375, false, 1'380);
  EXPECT_FALSE(s.b.models_room()) << "no window learned from sends it never counted";
}

TEST(ReportedBudget, Blind_OnceTheEchoIsLearned_NothingIsLeftUntilTheNextSendLeavesTheWindow) {
  Blind s;
  learn_and_fill(s);
  EXPECT_TRUE(s.b.models_room());
  EXPECT_EQ(s.b.room(200, 1'376 * kMs), Room::Confirmed) << "the 429 left nothing";
  EXPECT_EQ(s.b.room(200, 1'380 * kMs), Room::Probe) << "the send of 0.380 s left the window";
  EXPECT_EQ(s.send(1'380, true), 0);
  EXPECT_TRUE(s.b.models_room()) << "taken as the echo predicted: the prediction goes on";
  EXPECT_EQ(s.b.room(200, 1'381 * kMs), Room::Confirmed);
  EXPECT_EQ(s.b.room(200, 1'460 * kMs), Room::Probe) << "the send of 0.460 s";
}

TEST(ReportedBudget, Blind_ATakenRequestTheEchoDidNotPredict_DropsThePrediction) {
  Blind s;
  learn_and_fill(s);
  s.send(1'380, true);
  s.send(1'400, true);  // nothing had come back since 1.380 s, yet the backend took it
  EXPECT_FALSE(s.b.models_room()) << "this limiter gives back more than the echo: cooldowns only";
  EXPECT_EQ(s.b.room(200, 1'401 * kMs), Room::Fits);
}

TEST(ReportedBudget, Blind_EachProbeThatFindsNothingDoublesTheWaitForTheNext) {
  Blind s;
  learn_and_fill(s);
  s.send(1'380, true);  // as predicted (and past the 429's Retry-After)
  // No echo brings back 100,000 tokens: only the probe gap lets such a request test it.
  EXPECT_EQ(s.b.room(100'000, 1'375 * kMs + kFresh * 2 - kMs), Room::Confirmed);
  EXPECT_EQ(s.b.room(100'000, 1'375 * kMs + kFresh * 2), Room::Probe) << "at most kMaxFresh after the 429";
  s.send(1'900, false);  // a probe refused: the echo was right
  EXPECT_EQ(s.b.room(100'000, 2'899 * kMs), Room::Confirmed);
  EXPECT_EQ(s.b.room(100'000, 2'900 * kMs), Room::Probe) << "twice as long";
}

TEST(ReportedBudget, Blind_ARealReportEndsIt) {
  Blind s;
  learn_and_fill(s);
  EXPECT_EQ(s.b.observe(tokens_left(100'000, 500), 2'000 * kMs, s.b.charge(200)), -1);
  EXPECT_FALSE(s.b.watched());
  EXPECT_EQ(s.b.room(200, 2'001 * kMs), Room::Fits);
}

TEST(ReportedBudget, Blind_A429WithoutAReport_LeavesTheReportsOfADeploymentThatSendsThem) {
  routing::ReportedBudget b;
  b.observe(tokens_left(150), 0, {});
  b.observe({}, 10 * kMs, b.charge(200), /*taken=*/false);  // some answers say -1
  EXPECT_EQ(b.view().tokens_left, 150) << "what the reports said still stands";
  EXPECT_TRUE(b.models_room());
}

TEST(ReportedBudget, Blind_LongWithoutA429AndNothingLearned_StopsCounting) {
  Blind s;
  s.send(0, false, 40);
  EXPECT_EQ(s.send(100, true), 0);
  const base::MonoNanos later = routing::ReportedBudget::kForgetBlind.count() / kMs + 1;
  EXPECT_EQ(s.send(later, true), -1);
  EXPECT_FALSE(s.b.watched()) << "the hot path stops looking it up";
}

// A token bucket of 1,000 tokens a second (one a millisecond), holding 1,000, asked 200 tokens
// every 150 ms (1,333 a second) for 7 s: each 429 names when its request fits (retry-after-ms).
// Returns when the bucket holds 200 again after the last send (6,900 ms).
base::MonoNanos drain_a_bucket(Blind& s) {
  std::int64_t level = 1'000;
  base::MonoNanos t = 0;
  for (; t < 7'000; t += 150) {
    if (t > 0) level = std::min<std::int64_t>(1'000, level + 150);
    if (level >= 200) {
      level -= 200;
      s.send(t, true);
    } else {
      s.send(t, false, t + 200 - level);
    }
  }
  return t - 150 + std::max<std::int64_t>(0, 200 - level);
}

TEST(ReportedBudget, Blind_ABucketsRefillFromIts429s_SendsThereOnlyWhenItsLevelHoldsTheRequest) {
  Blind s;
  const base::MonoNanos fits = drain_a_bucket(s);
  ASSERT_TRUE(s.b.models_room()) << "the refill rate, from the moments the 429s named";
  // The bucket holds 200 again then, not a millisecond before, as its 429s had it (each
  // request sent before would have cost another 429 with reports off).
  ASSERT_EQ(fits, 7'000);
  EXPECT_EQ(s.b.room(200, (fits - 2) * kMs), Room::Confirmed);
  EXPECT_EQ(s.b.room(200, (fits + 1) * kMs), Room::Fits);
  EXPECT_EQ(s.b.room(100, (fits - 100) * kMs), Room::Fits) << "a smaller request fits sooner";
}

TEST(ReportedBudget, Blind_ARequestABucketTookWhereItsLevelSaidNo_RaisesTheLevelAndTheRate) {
  Blind s;
  const base::MonoNanos fits = drain_a_bucket(s);
  ASSERT_EQ(s.b.room(200, (fits - 50) * kMs), Room::Confirmed);
  // The bucket held more than the level said (a rate learned too low): since the last 429's
  // moment (6,800 ms: 200 held), 200 taken at 6,900 ms and 200 now, at 6,950 ms, prove 200
  // back in 150 ms. From here it holds 200 again 150 ms later.
  s.send(fits - 50, true);
  EXPECT_EQ(s.b.room(200, (fits + 98) * kMs), Room::Confirmed);
  EXPECT_EQ(s.b.room(200, (fits + 101) * kMs), Room::Fits);
}

TEST(ReportedBudget, Blind_ABucketsLevel_IsDroppedByARealReport) {
  Blind s;
  drain_a_bucket(s);
  s.b.observe(tokens_left(100'000, 500), 6'950 * kMs, s.b.charge(200));
  EXPECT_EQ(s.b.room(200, 6'951 * kMs), Room::Fits);
  EXPECT_FALSE(s.b.watched());
}

}  // namespace reported_budget_test
}  // namespace smartlb
