#include "smartlb/sim/rate_limiter.hpp"

#include "smartlb/sim/fixed_window_limiter.hpp"
#include "smartlb/sim/sliding_window_limiter.hpp"
#include "smartlb/sim/token_bucket_limiter.hpp"

#include <algorithm>

namespace smartlb::sim {

std::string_view limiter_kind_name(LimiterKind kind) {
  switch (kind) {
    case LimiterKind::Fixed:
      return "fixed";
    case LimiterKind::Sliding:
      return "sliding";
    case LimiterKind::Bucket:
      return "bucket";
  }
  return "fixed";
}

std::int64_t scale_limit_to_window(std::int64_t per_minute, std::chrono::milliseconds window) {
  if (per_minute <= 0) return 0;
  constexpr std::int64_t kMinuteMs = 60'000;
  const std::int64_t window_ms = std::max<std::int64_t>(window.count(), 1);
  // per_minute * window_ms / kMinuteMs without overflowing for large limits and windows.
  const std::int64_t scaled =
      per_minute / kMinuteMs * window_ms + per_minute % kMinuteMs * window_ms / kMinuteMs;
  return std::max<std::int64_t>(1, scaled);
}

std::unique_ptr<RateLimiter> make_rate_limiter(LimiterKind kind, std::int64_t limit,
                                               std::chrono::milliseconds window,
                                               std::chrono::milliseconds burst, SteadyTime origin) {
  switch (kind) {
    case LimiterKind::Sliding:
      return std::make_unique<SlidingWindowLimiter>(limit, window);
    case LimiterKind::Bucket:
      return std::make_unique<TokenBucketLimiter>(limit, window, burst, origin);
    case LimiterKind::Fixed:
      break;
  }
  return std::make_unique<FixedWindowLimiter>(limit, window, origin);
}

}  // namespace smartlb::sim
