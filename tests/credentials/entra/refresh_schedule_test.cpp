#include "smartlb/credentials/entra/refresh_schedule.hpp"

#include <gtest/gtest.h>

namespace smartlb::credentials::entra {
namespace refresh_schedule_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

base::MonoNanos ns(base::Nanos d) { return d.count(); }
constexpr base::MonoNanos kStart = 1'000'000'000'000;

TEST(RefreshSchedule, FetchesAtOnceAtFirst) {
  RefreshSchedule s;
  EXPECT_EQ(s.next_fetch(), 0);
  EXPECT_FALSE(s.token_valid(kStart));
}

TEST(RefreshSchedule, LongTokenIsRefreshedFiveMinutesBeforeItExpires) {
  RefreshSchedule s;
  s.succeeded(kStart, kStart + ns(1h));
  EXPECT_EQ(s.next_fetch(), kStart + ns(55min));
  EXPECT_TRUE(s.token_valid(kStart + ns(59min + 49s)));
  EXPECT_FALSE(s.token_valid(kStart + ns(59min + 50s)));  // the last 10 s are not used
}

TEST(RefreshSchedule, ShortTokenIsRefreshedAtHalfLife) {
  RefreshSchedule s;
  s.succeeded(kStart, kStart + ns(8min));
  EXPECT_EQ(s.next_fetch(), kStart + ns(4min));
  RefreshSchedule exactly_ten;
  exactly_ten.succeeded(kStart, kStart + ns(10min));
  EXPECT_EQ(exactly_ten.next_fetch(), kStart + ns(5min));
}

TEST(RefreshSchedule, FailuresWithoutTokenBackOffExponentiallyUpToAMinute) {
  RefreshSchedule s;
  base::MonoNanos now = kStart;
  std::vector<base::Nanos> delays;
  for (int i = 0; i < 9; ++i) {
    s.failed(now);
    delays.push_back(base::Nanos(s.next_fetch() - now));
    now = s.next_fetch();
  }
  EXPECT_EQ(delays, (std::vector<base::Nanos>{1s, 2s, 4s, 8s, 16s, 32s, 60s, 60s, 60s}));
  EXPECT_EQ(s.consecutive_failures(), 9u);
}

TEST(RefreshSchedule, FailuresWhileTheTokenIsValidRetryWithinItsLife) {
  RefreshSchedule s;
  s.succeeded(kStart, kStart + ns(1h));
  base::MonoNanos now = s.next_fetch();  // 55 min: 4 min 50 s of use left
  std::vector<base::Nanos> delays;
  for (int i = 0; i < 12 && s.token_valid(now); ++i) {
    s.failed(now);
    EXPECT_TRUE(s.token_valid(now));
    delays.push_back(base::Nanos(s.next_fetch() - now));
    now = s.next_fetch();
  }
  // 1, 2, 4, 8, 16, 32, 60, 60 s: 183 s; then half of what is left (107 s -> 53.5 s), ...
  ASSERT_GE(delays.size(), 10u);
  EXPECT_EQ(delays[6], 60s);
  EXPECT_EQ(delays[8], base::Nanos(ns(290s - 183s) / 2));
  EXPECT_LE(now, s.usable_until() + ns(1s));  // the retries stay inside the token's life
}

TEST(RefreshSchedule, SuccessResetsTheBackoff) {
  RefreshSchedule s;
  s.failed(kStart);
  s.failed(kStart + ns(1s));
  s.succeeded(kStart + ns(3s), kStart + ns(3s) + ns(1h));
  EXPECT_EQ(s.consecutive_failures(), 0u);
  const base::MonoNanos later = s.next_fetch();
  s.failed(later);
  EXPECT_EQ(s.next_fetch() - later, ns(1s));
}

TEST(RefreshSchedule, AVeryShortTokenKeepsThreeQuartersOfItsLife) {
  RefreshSchedule s;
  s.succeeded(kStart, kStart + ns(20s));
  EXPECT_EQ(s.usable_until(), kStart + ns(15s));
  EXPECT_EQ(s.next_fetch(), kStart + ns(10s));
}

TEST(RefreshSchedule, ARejectedTokenIsReplacedAtMostOnceAMinute) {
  RefreshSchedule s;
  s.refresh_requested(kStart);
  EXPECT_EQ(s.next_fetch(), 0) << "the first fetch is under way";
  s.succeeded(kStart, kStart + ns(1h));
  s.refresh_requested(kStart + ns(10s));
  EXPECT_EQ(s.next_fetch(), kStart + ns(60s)) << "a minute after the last fetch";
  s.succeeded(kStart + ns(60s), kStart + ns(60s) + ns(1h));
  s.refresh_requested(kStart + ns(200s));
  EXPECT_EQ(s.next_fetch(), kStart + ns(200s)) << "at once: the last fetch is older than a minute";
  s.succeeded(kStart + ns(200s), kStart + ns(200s) + ns(1h));
  s.failed(kStart + ns(201s));  // a retry is due in 1 s: a request never delays it
  s.refresh_requested(kStart + ns(201s));
  EXPECT_EQ(s.next_fetch(), kStart + ns(202s));
}

TEST(RefreshSchedule, CustomTiming) {
  RefreshTiming t;
  t.refresh_before = 1min;
  t.first_retry = 100ms;
  t.max_retry = 400ms;
  t.expiry_margin = 0s;
  RefreshSchedule s(t);
  s.succeeded(kStart, kStart + ns(10min));
  EXPECT_EQ(s.next_fetch(), kStart + ns(9min));
  EXPECT_TRUE(s.token_valid(kStart + ns(10min) - 1));
}

}  // namespace refresh_schedule_test
}  // namespace smartlb::credentials::entra
