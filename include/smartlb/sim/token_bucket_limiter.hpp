#pragma once
// A token bucket: refills continuously at `limit` per `window` (limit/window per second) up to
// a capacity of `burst` worth of refill, and starts full. There is no window to wait for: a
// rejected amount waits exactly until the bucket holds it. The level is kept exactly (in
// units of 1/window-nanoseconds of a token), so remaining and Retry-After have no rounding
// drift however often the bucket is read.

#include "smartlb/sim/rate_limiter.hpp"

namespace smartlb::sim {

class TokenBucketLimiter final : public RateLimiter {
 public:
  TokenBucketLimiter(std::int64_t limit, std::chrono::milliseconds window, std::chrono::milliseconds burst,
                     SteadyTime origin);

  std::int64_t capacity() const override { return capacity_; }
  std::int64_t remaining(SteadyTime now) override;
  std::chrono::nanoseconds wait_until_fits(std::int64_t amount, SteadyTime now) override;
  void take(std::int64_t amount, SteadyTime now) override;
  void reset(SteadyTime now) override;
  double per_second() const override;

  /// The capacity of a bucket refilling `limit` per `window` that holds `burst` of refill:
  /// rounded down, at least 1 unless limit is 0.
  static std::int64_t capacity_for(std::int64_t limit, std::chrono::milliseconds window,
                                   std::chrono::milliseconds burst);

 private:
  // 128 bits: a token is window-in-nanoseconds units (up to ~1e14) and a level up to ~1e15
  // tokens; their product needs more than 64 bits.
  __extension__ using Scaled = __int128;

  void refill(SteadyTime now);

  std::int64_t limit_;
  std::int64_t window_ns_;
  std::int64_t capacity_;
  Scaled level_;  // tokens * window_ns_; gains limit_ per nanosecond
  SteadyTime last_refill_;
};

}  // namespace smartlb::sim
