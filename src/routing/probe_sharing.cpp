#include "smartlb/routing/probe_sharing.hpp"

#include <algorithm>

namespace smartlb::routing {

namespace {
// Past its timeout, the prober still has to publish what it found: a round trip to Redis.
constexpr base::Nanos kPublishMargin = std::chrono::milliseconds(500);
}  // namespace

base::Nanos next_turn_check(base::Nanos interval, base::Nanos probe_timeout, base::Nanos turn_left,
                            std::optional<base::Nanos> result_age) {
  turn_left = std::clamp(turn_left, base::Nanos(0), interval);
  const base::Nanos elapsed = interval - turn_left;
  if (result_age && *result_age <= elapsed) return turn_left;  // this turn's result: until the next turn
  const base::Nanos wait = probe_timeout + kPublishMargin - elapsed;
  // Past that, the prober died or lost Redis before publishing: the next turn decides.
  if (wait <= base::Nanos(0)) return turn_left;
  return std::min(wait, turn_left);
}

}  // namespace smartlb::routing
