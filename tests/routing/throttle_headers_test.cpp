#include "smartlb/routing/throttle_headers.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace throttle_headers_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using std::chrono::milliseconds;

const auto kNow = std::chrono::system_clock::from_time_t(1'700'000'000);  // 2023-11-14T22:13:20Z

std::optional<milliseconds> hint(http::ThrottleHeaders h) { return routing::parse_retry_hint(h, kNow); }

TEST(ThrottleHeaders, RetryAfterMsWinsOverEverything) {
  http::ThrottleHeaders h;
  h.retry_after_ms = "1500";
  h.x_ms_retry_after_ms = "9000";
  h.retry_after = "20";
  EXPECT_EQ(hint(h), 1500ms);
}

TEST(ThrottleHeaders, XMsRetryAfterMs) {
  http::ThrottleHeaders h;
  h.x_ms_retry_after_ms = "250";
  h.retry_after = "20";
  EXPECT_EQ(hint(h), 250ms);
}

TEST(ThrottleHeaders, RetryAfterSecondsIntegerAndFractional) {
  http::ThrottleHeaders h;
  h.retry_after = "7";
  EXPECT_EQ(hint(h), 7000ms);
  h.retry_after = "0.25";
  EXPECT_EQ(hint(h), 250ms);
  h.retry_after = " 3 ";
  EXPECT_EQ(hint(h), 3000ms);
}

TEST(ThrottleHeaders, RetryAfterHttpDate) {
  http::ThrottleHeaders h;
  h.retry_after = "Tue, 14 Nov 2023 22:13:50 GMT";  // kNow + 30 s
  EXPECT_EQ(hint(h), 30'000ms);
}

TEST(ThrottleHeaders, RetryAfterObsoleteDateForms) {
  EXPECT_EQ(routing::parse_http_date("Tuesday, 14-Nov-23 22:13:50 GMT"), kNow + 30s);
  EXPECT_EQ(routing::parse_http_date("Tue Nov 14 22:13:50 2023"), kNow + 30s);
}

TEST(ThrottleHeaders, DateInThePastMeansNow) {
  http::ThrottleHeaders h;
  h.retry_after = "Sun, 06 Nov 1994 08:49:37 GMT";
  EXPECT_EQ(hint(h), 0ms);
}

TEST(ThrottleHeaders, JunkIsIgnoredAndTheNextHeaderUsed) {
  http::ThrottleHeaders h;
  h.retry_after_ms = "soon";
  h.x_ms_retry_after_ms = "-1";
  h.retry_after = "12";
  EXPECT_EQ(hint(h), 12'000ms);
}

TEST(ThrottleHeaders, JunkValuesGiveNoHint) {
  for (std::string_view junk :
       {"-1", "abc", "", "1,5", "nan", "inf", "0x10", "1.2.3", "Mon, 99 Foo 2023 25:61:61 GMT", "12 s"}) {
    http::ThrottleHeaders h;
    h.retry_after = junk;
    EXPECT_EQ(hint(h), std::nullopt) << "Retry-After: " << junk;
  }
}

TEST(ThrottleHeaders, ZeroIsAValidHint) {
  http::ThrottleHeaders h;
  h.retry_after = "0";
  EXPECT_EQ(hint(h), 0ms);
}

TEST(ThrottleHeaders, AbsurdlyLargeValuesDoNotOverflow) {
  http::ThrottleHeaders h;
  h.retry_after = "99999999999999999999999";
  const auto v = hint(h);
  ASSERT_TRUE(v.has_value());
  EXPECT_GT(*v, 3600s);
  EXPECT_LE(*v, std::chrono::hours(24));
}

TEST(ThrottleHeaders, DatesPastTheClocksRangeAreAFarFutureNotAnOverflow) {
  // system_clock ends in 2262; the fuzzer found 2994 overflowing the conversion (and the
  // delay coming out as 0 ms). Every form of a far date is a long delay now.
  for (const char* far :
       {"Sun, 06 Nov 2994 08:49:37 GMT", "Sun Nov  6 08:49:57 2994", "Fri, 31 Dec 2999 23:59:59 GMT"}) {
    http::ThrottleHeaders h;
    h.retry_after = far;
    const auto v = hint(h);
    ASSERT_TRUE(v.has_value()) << far;
    EXPECT_GT(*v, std::chrono::hours(24 * 365 * 100)) << far;
  }
}

TEST(ThrottleHeaders, DurationStrings) {
  EXPECT_EQ(routing::parse_duration_string("12ms"), 12ms);
  EXPECT_EQ(routing::parse_duration_string("20s"), 20s);
  EXPECT_EQ(routing::parse_duration_string("6m0s"), 360s);
  EXPECT_EQ(routing::parse_duration_string("2m59.56s"), 179'560ms);
  EXPECT_EQ(routing::parse_duration_string("1h"), 3600s);
  EXPECT_EQ(routing::parse_duration_string("1.5"), 1500ms);
  EXPECT_EQ(routing::parse_duration_string("5x"), std::nullopt);
  EXPECT_EQ(routing::parse_duration_string("s"), std::nullopt);
  EXPECT_EQ(routing::parse_duration_string("-3s"), std::nullopt);
}

TEST(ThrottleHeaders, ResetHeadersPreferTheExhaustedLimit) {
  http::ThrottleHeaders h;
  h.reset_requests = "1s";
  h.reset_tokens = "6m0s";
  h.remaining_requests = "0";
  h.remaining_tokens = "5000";
  EXPECT_EQ(hint(h), 1s);
  h.remaining_requests = "12";
  h.remaining_tokens = "0";
  EXPECT_EQ(hint(h), 360s);
}

TEST(ThrottleHeaders, ResetHeadersWithoutRemainingTakeTheLonger) {
  http::ThrottleHeaders h;
  h.reset_requests = "2s";
  h.reset_tokens = "12ms";
  EXPECT_EQ(hint(h), 2s);
}

TEST(ThrottleHeaders, NothingUsable) { EXPECT_EQ(hint({}), std::nullopt); }

TEST(ThrottleHeaders, RateLimitReport_ReadsRemainingAndResets) {
  http::ThrottleHeaders h;
  h.remaining_tokens = "4800";
  h.remaining_requests = " 29 ";
  h.reset_tokens = "6m0s";
  h.reset_requests = "20ms";
  const routing::RateLimitReport r = routing::parse_rate_limit_report(h);
  EXPECT_EQ(r.remaining_tokens, 4800);
  EXPECT_EQ(r.remaining_requests, 29);
  EXPECT_EQ(r.reset_tokens, 360'000ms);
  EXPECT_EQ(r.reset_requests, 20ms);
}

TEST(ThrottleHeaders, AnthropicsReportIsReadWhenThereIsNoOther) {
  const auto wall = std::chrono::sys_days{std::chrono::year{2026} / 11 / 29} + 5h + 41min;
  http::ThrottleHeaders h;
  h.anthropic_tokens_remaining = "79000";
  h.anthropic_input_tokens_remaining = "50000";
  h.anthropic_requests_remaining = "49";
  h.anthropic_tokens_reset = "2026-11-29T05:41:30Z";
  h.anthropic_requests_reset = "2026-11-29T05:41:00.250Z";
  routing::RateLimitReport r = routing::parse_rate_limit_report(h, wall);
  EXPECT_EQ(r.remaining_tokens, 79000) << "the combined limit's, when sent";
  EXPECT_EQ(r.remaining_requests, 49);
  EXPECT_EQ(r.reset_tokens, 30s);
  EXPECT_EQ(r.reset_requests, 250ms);
  h.anthropic_tokens_remaining = {};
  h.anthropic_input_tokens_reset = "2026-11-29T06:41:10+01:00";
  r = routing::parse_rate_limit_report(h, wall);
  EXPECT_EQ(r.remaining_tokens, 50000) << "else the input tokens'";
  EXPECT_EQ(r.reset_tokens, 10s) << "an offset counts";
  h.remaining_tokens = "7";
  EXPECT_EQ(routing::parse_rate_limit_report(h, wall).remaining_tokens, 7) << "x-ratelimit-* first";
}

TEST(ThrottleHeaders, Rfc3339Times) {
  using std::chrono::sys_days;
  const auto day = sys_days{std::chrono::year{2026} / 11 / 29};
  EXPECT_EQ(routing::parse_rfc3339("2026-11-29T05:41:00Z"), day + 5h + 41min);
  EXPECT_EQ(routing::parse_rfc3339("2026-11-29t05:41:00.5z"), day + 5h + 41min + 500ms);
  EXPECT_EQ(routing::parse_rfc3339("2026-11-29T05:41:00-02:30"), day + 8h + 11min);
  for (const char* bad : {"", "2026-11-29", "2026-13-01T00:00:00Z", "2026-11-29T25:00:00Z",
                          "2026-11-29T05:41:00", "2026-11-29T05:41:00+1", "yesterday"})
    EXPECT_EQ(routing::parse_rfc3339(bad), std::nullopt) << bad;
}

TEST(ThrottleHeaders, RateLimitReport_EmptyWithoutARemainingCount) {
  http::ThrottleHeaders h;
  h.reset_tokens = "1s";
  EXPECT_TRUE(routing::parse_rate_limit_report(h).empty());
  h.remaining_tokens = "-3";
  EXPECT_TRUE(routing::parse_rate_limit_report(h).empty()) << "junk is no report";
  h.remaining_tokens = "abc";
  EXPECT_TRUE(routing::parse_rate_limit_report(h).empty());
  h.remaining_requests = "0";
  EXPECT_FALSE(routing::parse_rate_limit_report(h).empty());
  EXPECT_EQ(routing::parse_remaining("12.0"), 12);
  EXPECT_EQ(routing::parse_remaining("0"), 0);
  EXPECT_EQ(routing::parse_remaining("999999999999999"), 999'999'999'999'999);
  EXPECT_EQ(routing::parse_remaining("12a"), std::nullopt);
  EXPECT_EQ(routing::parse_remaining(""), std::nullopt);
}

}  // namespace throttle_headers_test
}  // namespace smartlb
