#include "smartlb/sim/quota_report.hpp"

#include <deque>

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace quota_report_test {  // named, not anonymous: tests/CMakeLists.txt

const QuotaState kState{
    .limit_tokens = 100, .limit_requests = 10, .remaining_tokens = 86, .remaining_requests = 9};

// Hands out the scripted draws in order; a draw past the script fails the test.
class ScriptedDraws {
 public:
  explicit ScriptedDraws(std::deque<double> draws) : draws_(std::move(draws)) {}
  std::function<double()> source() {
    return [this] {
      if (draws_.empty()) {
        ADD_FAILURE() << "unexpected random draw";
        return 0.5;
      }
      const double draw = draws_.front();
      draws_.pop_front();
      return draw;
    };
  }
  std::size_t left() const { return draws_.size(); }

 private:
  std::deque<double> draws_;
};

TEST(ReportQuota, WithoutNoiseReportsTheStateAndDrawsNothing) {
  ScriptedDraws draws({});
  const auto report = report_quota(kState, {}, draws.source());
  EXPECT_EQ(report.remaining_requests, 9);
  EXPECT_EQ(report.remaining_tokens, 86);
  EXPECT_EQ(report.limit_requests, 10);
  EXPECT_EQ(report.limit_tokens, 100);
}

TEST(ReportQuota, JitterScalesEachRemainingByItsOwnDraw) {
  // jitter 0.5: factor = 0.5 + draw. Requests first, then tokens.
  ScriptedDraws draws({0.0, 0.75});
  const auto report = report_quota(kState, {.jitter = 0.5}, draws.source());
  EXPECT_EQ(report.remaining_requests, 5);  // 9 x 0.5 = 4.5, rounded half away from zero
  EXPECT_EQ(report.remaining_tokens, 108);  // 86 x 1.25 = 107.5; may exceed the limit
  EXPECT_EQ(report.limit_requests, 10);     // limits are not jittered
  EXPECT_EQ(report.limit_tokens, 100);
  EXPECT_EQ(draws.left(), 0u);
}

TEST(ReportQuota, JitterNeverReportsBelowZero) {
  ScriptedDraws draws({0.0, 0.2});
  const auto report = report_quota(kState, {.jitter = 1.0}, draws.source());
  EXPECT_EQ(report.remaining_requests, 0);  // 9 x 0
  EXPECT_EQ(report.remaining_tokens, 34);   // 86 x 0.4 = 34.4
}

TEST(ReportQuota, UnknownReportsMinusOneForRemainingAndLimit) {
  ScriptedDraws draws({0.09});
  const auto report = report_quota(kState, {.jitter = 0.5, .unknown_rate = 0.1}, draws.source());
  EXPECT_EQ(report.remaining_requests, -1);
  EXPECT_EQ(report.remaining_tokens, -1);
  EXPECT_EQ(report.limit_requests, -1);
  EXPECT_EQ(report.limit_tokens, -1);
  EXPECT_EQ(draws.left(), 0u);  // an unknown report draws no jitter
}

TEST(ReportQuota, ADrawAtOrAboveTheUnknownRateReportsNormallyThenJitters) {
  ScriptedDraws draws({0.1, 0.5, 0.5});
  const auto report = report_quota(kState, {.jitter = 0.5, .unknown_rate = 0.1}, draws.source());
  EXPECT_EQ(report.remaining_requests, 9);
  EXPECT_EQ(report.remaining_tokens, 86);
  EXPECT_EQ(draws.left(), 0u);
}

}  // namespace quota_report_test
}  // namespace smartlb::sim
