#pragma once
// A true sliding window: what was admitted in (now - window, now] counts against `limit`.
// Each admitted amount leaves the window exactly `window` after it was admitted, so capacity
// comes back piece by piece, in the order it was used; a rejected amount waits until enough
// of the oldest admitted amounts have left for it to fit (what Azure-like sliding limiters
// answer in Retry-After).

#include "smartlb/sim/rate_limiter.hpp"

#include <deque>

namespace smartlb::sim {

class SlidingWindowLimiter final : public RateLimiter {
 public:
  SlidingWindowLimiter(std::int64_t limit, std::chrono::milliseconds window);

  std::int64_t capacity() const override { return limit_; }
  std::int64_t remaining(SteadyTime now) override;
  std::chrono::nanoseconds wait_until_fits(std::int64_t amount, SteadyTime now) override;
  void take(std::int64_t amount, SteadyTime now) override;
  void reset(SteadyTime now) override;
  double per_second() const override;

 private:
  struct Admitted {
    SteadyTime at;
    std::int64_t amount;
  };
  void expire(SteadyTime now);

  std::int64_t limit_;
  std::chrono::milliseconds window_;
  std::deque<Admitted> admitted_;  // oldest first; amounts admitted at the same instant merged
  std::int64_t used_ = 0;          // sum of admitted_
};

}  // namespace smartlb::sim
