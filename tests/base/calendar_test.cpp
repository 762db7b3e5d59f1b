#include "smartlb/base/calendar.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace calendar_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono;

// 2026-11-25 10:00:00 UTC.
const base::WallTime kWall = sys_days(year(2026) / November / 25) + hours(10);

TEST(CalendarPeriod, DaysAndMonthsEndAtMidnightUtc) {
  const base::PeriodSpan day = calendar_period(base::CalendarPeriod::Day, kWall);
  EXPECT_EQ(day.end, base::WallTime(sys_days(year(2026) / November / 26)));
  EXPECT_EQ(calendar_period(base::CalendarPeriod::Day, day.end).index, day.index + 1);
  const base::PeriodSpan month = calendar_period(base::CalendarPeriod::Month, kWall);
  EXPECT_EQ(month.index, (2026 - 1970) * 12 + 10);
  EXPECT_EQ(month.end, base::WallTime(sys_days(year(2026) / December / 1)));
  const base::PeriodSpan december =
      calendar_period(base::CalendarPeriod::Month, base::WallTime(sys_days(year(2026) / December / 31)));
  EXPECT_EQ(december.index, month.index + 1);
  EXPECT_EQ(december.end, base::WallTime(sys_days(year(2027) / January / 1)));
}

TEST(CalendarPeriod, AMonthsNumberGivesItsStart) {
  EXPECT_EQ(base::month_start(0), base::WallTime(sys_days(year(1970) / January / 1)));
  EXPECT_EQ(base::month_start((2026 - 1970) * 12 + 11), base::WallTime(sys_days(year(2026) / December / 1)));
  EXPECT_EQ(base::month_start(-1), base::WallTime(sys_days(year(1969) / December / 1)));
  const base::PeriodSpan before_1970 =
      calendar_period(base::CalendarPeriod::Month, base::WallTime(sys_days(year(1969) / December / 15)));
  EXPECT_EQ(before_1970.index, -1);
  EXPECT_EQ(before_1970.end, base::WallTime(sys_days(year(1970) / January / 1)));
  const base::PeriodSpan february =
      calendar_period(base::CalendarPeriod::Month, base::WallTime(sys_days(year(2028) / February / 29)));
  EXPECT_EQ(base::month_start(february.index), base::WallTime(sys_days(year(2028) / February / 1)));
  EXPECT_EQ(february.end, base::WallTime(sys_days(year(2028) / March / 1)));
}

}  // namespace calendar_test
}  // namespace smartlb
