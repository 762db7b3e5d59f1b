#include "smartlb/base/calendar.hpp"

namespace smartlb::base {

PeriodSpan calendar_period(CalendarPeriod p, WallTime t) {
  using namespace std::chrono;
  const sys_days day = floor<days>(t);
  if (p == CalendarPeriod::Day) return {day.time_since_epoch().count(), WallTime(day + days(1))};
  const year_month_day ymd(day);
  const std::int64_t index = (std::int64_t{static_cast<int>(ymd.year())} - 1970) * 12 +
                             (static_cast<int>(static_cast<unsigned>(ymd.month())) - 1);
  return {index, month_start(index + 1)};
}

WallTime month_start(std::int64_t index) {
  using namespace std::chrono;
  // Floor division: months before 1970 have negative numbers.
  const std::int64_t years = index >= 0 ? index / 12 : (index - 11) / 12;
  const auto month_of_year = static_cast<unsigned>(index - years * 12) + 1;
  return WallTime(sys_days(year(static_cast<int>(1970 + years)) / month(month_of_year) / 1));
}

}  // namespace smartlb::base
