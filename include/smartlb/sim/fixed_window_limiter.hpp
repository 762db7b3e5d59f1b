#pragma once
// Fixed windows: at most `limit` per window, windows aligned to the origin (construction or
// reset): window k covers [origin + k*window, origin + (k+1)*window). Everything comes back at
// once when a window ends, so a rejected amount waits until the next window starts.

#include "smartlb/sim/rate_limiter.hpp"

namespace smartlb::sim {

class FixedWindowLimiter final : public RateLimiter {
 public:
  FixedWindowLimiter(std::int64_t limit, std::chrono::milliseconds window, SteadyTime origin);

  std::int64_t capacity() const override { return limit_; }
  std::int64_t remaining(SteadyTime now) override;
  std::chrono::nanoseconds wait_until_fits(std::int64_t amount, SteadyTime now) override;
  void take(std::int64_t amount, SteadyTime now) override;
  void reset(SteadyTime now) override;
  double per_second() const override;

 private:
  void roll_to(SteadyTime now);

  std::int64_t limit_;
  std::chrono::milliseconds window_;
  SteadyTime origin_;
  std::int64_t window_index_ = 0;
  std::int64_t used_ = 0;
};

}  // namespace smartlb::sim
