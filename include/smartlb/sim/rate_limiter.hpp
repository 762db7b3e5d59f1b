#pragma once
// One rate limit on one quantity (tokens or requests), the way a real service enforces it.
// Three models share this interface (one file each): a fixed window, a sliding window and a
// token bucket. Azure, OpenAI and the gateways in front of them use all three, and a client
// that routes on their reports must cope with each (docs/simulator.md, "Quotas").
//
// Pure: time is passed in, nothing is read from a clock. A model never charges on its own:
// the caller asks whether an amount fits (`remaining`), then `take`s it, so a request limited
// on two quantities is charged on both or on neither.

#include "smartlb/sim/clock.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

namespace smartlb::sim {

enum class LimiterKind { Fixed, Sliding, Bucket };

std::string_view limiter_kind_name(LimiterKind kind);

/// Limit for one window: per_minute * window / 1 min, rounded down, at least 1 unless
/// per_minute is 0 (a zero limit rejects everything).
std::int64_t scale_limit_to_window(std::int64_t per_minute, std::chrono::milliseconds window);

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;

  /// What the limiter holds when nothing has been used: the x-ratelimit-limit-* figure.
  virtual std::int64_t capacity() const = 0;
  /// What can be admitted at `now`. An amount fits exactly when it is at most this.
  virtual std::int64_t remaining(SteadyTime now) = 0;
  /// Time from `now` until `amount` fits; zero when it fits now. An amount larger than the
  /// capacity never fits: then the time until the limiter is back to full capacity.
  virtual std::chrono::nanoseconds wait_until_fits(std::int64_t amount, SteadyTime now) = 0;
  /// Charges `amount` at `now`. The caller has checked that it fits.
  virtual void take(std::int64_t amount, SteadyTime now) = 0;
  /// Forgets everything charged and starts afresh (full) at `now`.
  virtual void reset(SteadyTime now) = 0;
  /// The sustained rate: what the limiter admits per second in the long run.
  virtual double per_second() const = 0;
};

/// A limiter of `kind` admitting `limit` per `window` (limit = already scaled to the window).
/// `burst` matters to the bucket only: its capacity is `burst` worth of refill.
std::unique_ptr<RateLimiter> make_rate_limiter(LimiterKind kind, std::int64_t limit,
                                               std::chrono::milliseconds window,
                                               std::chrono::milliseconds burst, SteadyTime origin);

}  // namespace smartlb::sim
