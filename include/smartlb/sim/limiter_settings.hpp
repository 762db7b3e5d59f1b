#pragma once
// How the simulator enforces its quotas: which limiter model, over which window (the
// per-minute TPM/RPM are scaled to it), the bucket's burst, and Azure-style RPM sub-intervals.

#include "smartlb/sim/rate_limiter.hpp"

#include <chrono>
#include <optional>

namespace smartlb::sim {

struct LimiterSettings {
  LimiterKind kind = LimiterKind::Fixed;
  std::chrono::milliseconds window{60'000};
  /// Bucket only: its capacity is this much refill (default one second's worth).
  std::chrono::milliseconds burst{1'000};
  /// Set: requests are limited per fixed sub-interval of this length to RPM * interval / 1 min
  /// (at least 1), independently of the token limiter, like Azure's 1 s / 10 s RPM intervals.
  /// Unset: requests are limited by the same model and window as tokens.
  std::optional<std::chrono::milliseconds> rpm_interval;
  /// The x-ratelimit-limit-* headers state the limit per window (the per-minute limit scaled to
  /// the window) instead of the limiter's capacity. The same for windows; for a bucket the
  /// headers then do not describe the bucket (it holds only `burst` of refill), as real
  /// services' headers often do not.
  bool limit_header_per_window = false;

  bool operator==(const LimiterSettings&) const = default;
};

}  // namespace smartlb::sim
