// ReportedBudget: what a backend says remains of its rate limit, minus what smartlb sent since,
// and when that window can have refilled.
#include "smartlb/routing/reported_budget.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

using namespace std::chrono_literals;

constexpr MonoNanos kSec = 1'000'000'000;
constexpr MonoNanos kMs = 1'000'000;
constexpr Nanos kWindow = 1s;

RateLimitReport tokens_left(std::int64_t tokens, std::int64_t requests = 1'000) {
  RateLimitReport r;
  r.remaining_tokens = tokens;
  r.remaining_requests = requests;
  return r;
}

TEST(ReportedBudget, NextBoundary_StrictlyAfterTheTimeOnEitherSideOfTheAnchor) {
  EXPECT_EQ(ReportedBudget::next_boundary(10 * kSec, kWindow, 10 * kSec), 11 * kSec);
  EXPECT_EQ(ReportedBudget::next_boundary(10 * kSec, kWindow, 12 * kSec + 300 * kMs), 13 * kSec);
  EXPECT_EQ(ReportedBudget::next_boundary(10 * kSec, kWindow, 9 * kSec), 10 * kSec);
  EXPECT_EQ(ReportedBudget::next_boundary(10 * kSec, kWindow, 9 * kSec - 1), 9 * kSec);
  EXPECT_EQ(ReportedBudget::next_boundary(10 * kSec, kWindow, 7 * kSec + 500 * kMs), 8 * kSec);
}

TEST(ReportedBudget, PlentifulReports_AreNotWatchedAndCostNothing) {
  ReportedBudget b;
  EXPECT_EQ(b.observe(tokens_left(100'000, 500), 0, {}, kWindow), 0);
  EXPECT_FALSE(b.watched());
  EXPECT_TRUE(b.fits(1'000'000, 0)) << "a plentiful report never limits";
  const auto mark = b.charge(200);
  EXPECT_EQ(mark.tokens, 0) << "nothing is counted while nothing is low";
  EXPECT_EQ(mark.requests, 0);
}

TEST(ReportedBudget, LowReport_SkipsACostThatDoesNotFitUntilTheWindowRefills) {
  ReportedBudget b;
  b.window_ends_at(0, kWindow);  // windows start at whole seconds
  EXPECT_EQ(b.observe(tokens_left(150), 5 * kSec + 300 * kMs, {}, kWindow), +1);
  EXPECT_TRUE(b.watched());
  EXPECT_TRUE(b.fits(150, 5 * kSec + 300 * kMs));
  EXPECT_FALSE(b.fits(151, 5 * kSec + 300 * kMs));
  EXPECT_EQ(b.fits_at(200, 5 * kSec + 310 * kMs), 6 * kSec);
  EXPECT_FALSE(b.fits(200, 6 * kSec - 1));
  EXPECT_TRUE(b.fits(200, 6 * kSec));
}

TEST(ReportedBudget, WithoutAnAnchorOrAResetHint_ALowReportSkipsNothing) {
  ReportedBudget b;
  EXPECT_EQ(b.observe(tokens_left(0, 0), 0, {}, kWindow), +1);
  EXPECT_TRUE(b.watched()) << "still counted, so that the 429 that teaches the window is the only one";
  EXPECT_TRUE(b.fits(200, 0));
  b.window_ends_at(300 * kMs, kWindow);  // that 429: the window ends at 0.3 s
  EXPECT_EQ(b.fits_at(200, 0), 300 * kMs);
}

TEST(ReportedBudget, UnknownCost_NeedsAtLeastOneToken) {
  ReportedBudget b;
  b.window_ends_at(kSec, kWindow);
  b.observe(tokens_left(0), 0, {}, kWindow);
  EXPECT_FALSE(b.fits(0, 0));
}

TEST(ReportedBudget, OwnSendsSinceTheReport_AreSubtracted) {
  ReportedBudget b;
  b.window_ends_at(kSec, kWindow);
  b.observe(tokens_left(500), 0, b.charge(200), kWindow);
  const auto first = b.charge(200);  // a burst: both leave before another report arrives
  EXPECT_TRUE(b.fits(200, 1));
  b.charge(200);
  EXPECT_FALSE(b.fits(200, 1)) << "500 - 2 x 200 = 100 left";
  EXPECT_EQ(b.view(1).tokens_left, 100);
  // The first one's answer: 300 left after it; the second is still counted against that.
  b.observe(tokens_left(300), 1, first, kWindow);
  EXPECT_EQ(b.view(2).tokens_left, 100);
}

TEST(ReportedBudget, ZeroRequestsLeft_SkipsForAtMostTenSecondsOfAMinuteWindow) {
  ReportedBudget b;
  b.window_ends_at(0, 60s);
  b.observe(tokens_left(100'000, 0), 0, {}, 60s);
  EXPECT_TRUE(b.watched());
  EXPECT_EQ(b.fits_at(1, 0), 10 * kSec) << "Azure enforces RPM over 1 s or 10 s intervals";
}

TEST(ReportedBudget, ResetHints_NameTheRefillEvenWithoutAnAnchor) {
  ReportedBudget b;
  RateLimitReport r = tokens_left(10, 0);
  r.reset_tokens = 6000ms;
  r.reset_requests = 20ms;
  b.observe(r, kSec, {}, 60s);
  EXPECT_EQ(b.view(kSec).tokens_until, 7 * kSec);
  EXPECT_EQ(b.view(kSec).requests_until, kSec + 20 * kMs);
  EXPECT_EQ(b.fits_at(5, kSec), kSec + 20 * kMs) << "only the request limit blocks 5 tokens";
  EXPECT_EQ(b.fits_at(50, kSec), 7 * kSec);
  b.window_ends_at(kSec + 500 * kMs, 60s);
  EXPECT_EQ(b.fits_at(50, kSec), 7 * kSec) << "a hint knows better than a learned window";
}

TEST(ReportedBudget, A429sWindowEnd_AnchorsTheRefillToTheBoundaryAfterTheReport) {
  ReportedBudget b;
  b.observe(tokens_left(100), 5 * kSec + 200 * kMs, {}, kWindow);
  EXPECT_EQ(b.fits_at(200, 5 * kSec + 300 * kMs), 5 * kSec + 300 * kMs) << "no anchor yet";
  b.window_ends_at(3 * kSec + 700 * kMs, kWindow);  // ... 4.7, 5.7, 6.7 s
  EXPECT_EQ(b.fits_at(200, 5 * kSec + 300 * kMs), 5 * kSec + 700 * kMs);
  b.observe(tokens_left(50), 5 * kSec + 800 * kMs, {}, kWindow);
  EXPECT_EQ(b.fits_at(200, 5 * kSec + 800 * kMs), 6 * kSec + 700 * kMs) << "later reports use the anchor";
}

TEST(ReportedBudget, ARise_AnchorsAtTheFirstSendSeenInTheNewWindow) {
  ReportedBudget b;
  b.observe(tokens_left(4'000), 0, {}, kWindow);
  b.observe(tokens_left(1'000), 300 * kMs, {}, kWindow);
  b.observe(tokens_left(4'800), 1'020 * kMs, {}, kWindow);  // a window began in (0.3, 1.02]
  b.observe(tokens_left(100), 1'700 * kMs, {}, kWindow);
  EXPECT_EQ(b.fits_at(200, 1'700 * kMs), 2'020 * kMs);
}

TEST(ReportedBudget, AnAnchorThatExplainsARise_IsKept) {
  ReportedBudget b;
  b.window_ends_at(1'000 * kMs, kWindow);  // exact, from a 429
  b.observe(tokens_left(100), 1'900 * kMs, {}, kWindow);
  b.observe(tokens_left(4'800), 2'030 * kMs, {}, kWindow);  // boundary 2.0 in (1.9, 2.03]: consistent
  b.observe(tokens_left(100), 2'800 * kMs, {}, kWindow);
  EXPECT_EQ(b.fits_at(200, 2'800 * kMs), 3'000 * kMs);
}

TEST(ReportedBudget, AnAnchorARiseContradicts_IsReplaced) {
  ReportedBudget b;
  b.window_ends_at(500 * kMs, kWindow);  // predicts 1.5, 2.5, ...
  b.observe(tokens_left(100), 1'900 * kMs, {}, kWindow);
  b.observe(tokens_left(4'800), 2'040 * kMs, {}, kWindow);  // no predicted boundary in (1.9, 2.04]
  b.observe(tokens_left(100), 2'800 * kMs, {}, kWindow);
  EXPECT_EQ(b.fits_at(200, 2'800 * kMs), 3'040 * kMs);
}

TEST(ReportedBudget, ASmallRise_IsAnswersReorderedNotANewWindow) {
  ReportedBudget b;
  b.window_ends_at(1'000 * kMs, kWindow);  // exact, from a 429
  b.observe(tokens_left(5'000), 1'000 * kMs, {}, kWindow);
  b.observe(tokens_left(2'000), 1'500 * kMs, {}, kWindow);
  b.observe(tokens_left(2'200), 1'501 * kMs, {}, kWindow);  // reached the backend before the last
  b.observe(tokens_left(100), 1'800 * kMs, {}, kWindow);
  EXPECT_EQ(b.fits_at(200, 1'800 * kMs), 2'000 * kMs) << "the anchor stands";
}

TEST(ReportedBudget, AnOlderAnswer_DoesNotOverwriteANewerReport) {
  ReportedBudget b;
  b.window_ends_at(0, kWindow);
  b.observe(tokens_left(100), 2 * kSec, {}, kWindow);
  EXPECT_EQ(b.observe(tokens_left(90'000), 1 * kSec, {}, kWindow), 0);
  EXPECT_TRUE(b.watched());
  EXPECT_FALSE(b.fits(200, 2 * kSec));
}

TEST(ReportedBudget, APlentifulReport_EndsTheWatch) {
  ReportedBudget b;
  b.observe(tokens_left(10), 0, {}, kWindow);
  EXPECT_EQ(b.observe(tokens_left(90'000, 900), 10 * kMs, {}, kWindow), -1);
  EXPECT_FALSE(b.watched());
  EXPECT_TRUE(b.fits(50'000, 10 * kMs));
}

TEST(ReportedBudget, RequestsOnlyReports_AreEnough) {
  ReportedBudget b;
  b.window_ends_at(0, kWindow);
  RateLimitReport r;
  r.remaining_requests = 1;
  b.observe(r, 0, b.charge(0), kWindow);
  EXPECT_TRUE(b.fits(1'000'000, 0)) << "no token report: only the request count limits";
  b.charge(0);
  EXPECT_FALSE(b.fits(1, 0));
  EXPECT_EQ(b.fits_at(1, 0), kSec);
}

}  // namespace
}  // namespace smartlb
