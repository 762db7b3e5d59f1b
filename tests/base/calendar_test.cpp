#include "smartlb/base/calendar.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

using namespace std::chrono;

// 2026-11-25 10:00:00 UTC.
const WallTime kWall = sys_days(year(2026) / November / 25) + hours(10);

TEST(CalendarPeriod, DaysAndMonthsEndAtMidnightUtc) {
  const PeriodSpan day = calendar_period(CalendarPeriod::Day, kWall);
  EXPECT_EQ(day.end, WallTime(sys_days(year(2026) / November / 26)));
  EXPECT_EQ(calendar_period(CalendarPeriod::Day, day.end).index, day.index + 1);
  const PeriodSpan month = calendar_period(CalendarPeriod::Month, kWall);
  EXPECT_EQ(month.index, (2026 - 1970) * 12 + 10);
  EXPECT_EQ(month.end, WallTime(sys_days(year(2026) / December / 1)));
  const PeriodSpan december =
      calendar_period(CalendarPeriod::Month, WallTime(sys_days(year(2026) / December / 31)));
  EXPECT_EQ(december.index, month.index + 1);
  EXPECT_EQ(december.end, WallTime(sys_days(year(2027) / January / 1)));
}

TEST(CalendarPeriod, AMonthsNumberGivesItsStart) {
  EXPECT_EQ(month_start(0), WallTime(sys_days(year(1970) / January / 1)));
  EXPECT_EQ(month_start((2026 - 1970) * 12 + 11), WallTime(sys_days(year(2026) / December / 1)));
  EXPECT_EQ(month_start(-1), WallTime(sys_days(year(1969) / December / 1)));
  const PeriodSpan before_1970 =
      calendar_period(CalendarPeriod::Month, WallTime(sys_days(year(1969) / December / 15)));
  EXPECT_EQ(before_1970.index, -1);
  EXPECT_EQ(before_1970.end, WallTime(sys_days(year(1970) / January / 1)));
  const PeriodSpan february =
      calendar_period(CalendarPeriod::Month, WallTime(sys_days(year(2028) / February / 29)));
  EXPECT_EQ(month_start(february.index), WallTime(sys_days(year(2028) / February / 1)));
  EXPECT_EQ(february.end, WallTime(sys_days(year(2028) / March / 1)));
}

}  // namespace
}  // namespace smartlb
