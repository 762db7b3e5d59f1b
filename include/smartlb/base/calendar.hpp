#pragma once
// Calendar periods in UTC, for quotas per day and per month: a period's number (days or months
// since 1970) and when it ends. A day is a fixed length of time since the epoch; a month is not.
#include <chrono>
#include <cstdint>

namespace smartlb::base {

using WallTime = std::chrono::system_clock::time_point;

enum class CalendarPeriod : std::uint8_t { Day, Month };
struct PeriodSpan {
  std::int64_t index = 0;
  WallTime end;
};
PeriodSpan calendar_period(CalendarPeriod p, WallTime t);
// When month number `index` (months since January 1970) begins.
WallTime month_start(std::int64_t index);

}  // namespace smartlb::base
