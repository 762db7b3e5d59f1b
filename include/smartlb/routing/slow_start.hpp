#pragma once
// Slow start: a member that comes back from a cooldown gets a share of its traffic that grows
// linearly over `period`, so a backend that was throttled or down is not handed its full weight
// (and with it a burst of requests) the moment its cooldown ends.
#include <algorithm>
#include <cstdint>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

// Where the ramp starts, in percent of the weight.
inline constexpr std::uint32_t kSlowStartFloorPercent = 10;

// The weight to draw with at `now` for a member of `weight` whose cooldown ended at
// `recovered_at`:
//  - `weight` when `period` <= 0 (no slow start), `recovered_at` is 0 (never cooled down), or
//    `period` has passed since `recovered_at`;
//  - otherwise weight * 10 % (rounded down, at least 1) plus the rest of the weight in proportion
//    to the time elapsed, rounded down: never below 1 nor above `weight`, never decreasing as
//    `now` grows;
//  - `now` before `recovered_at` (a clock read a tick behind the deadline's) counts as the ramp's
//    start;
//  - 0 when `weight` is 0.
inline std::uint32_t slow_start_weight(std::uint32_t weight, base::MonoNanos recovered_at,
                                       base::MonoNanos now, base::Nanos period) {
  if (weight == 0 || period.count() <= 0 || recovered_at == 0) return weight;
  const base::MonoNanos elapsed = std::max<base::MonoNanos>(now - recovered_at, 0);
  if (elapsed >= period.count()) return weight;
  const auto floor = std::max<std::uint32_t>(
      static_cast<std::uint32_t>(std::uint64_t{weight} * kSlowStartFloorPercent / 100), 1);
  const double fraction = static_cast<double>(elapsed) / static_cast<double>(period.count());
  const auto ramped = static_cast<std::uint32_t>(floor + static_cast<double>(weight - floor) * fraction);
  return std::clamp<std::uint32_t>(ramped, 1, weight);
}

}  // namespace smartlb::routing
