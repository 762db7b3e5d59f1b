#include "smartlb/sim/fixed_window_limiter.hpp"

#include <algorithm>

namespace smartlb::sim {

FixedWindowLimiter::FixedWindowLimiter(std::int64_t limit, std::chrono::milliseconds window,
                                       SteadyTime origin)
    : limit_(limit), window_(std::max(window, std::chrono::milliseconds(1))), origin_(origin) {}

void FixedWindowLimiter::roll_to(SteadyTime now) {
  const auto elapsed = std::max(now - origin_, SteadyTime::duration::zero());
  const std::int64_t index = elapsed / window_;
  if (index != window_index_) {
    window_index_ = index;
    used_ = 0;
  }
}

std::int64_t FixedWindowLimiter::remaining(SteadyTime now) {
  roll_to(now);
  return std::max<std::int64_t>(0, limit_ - used_);
}

std::chrono::nanoseconds FixedWindowLimiter::wait_until_fits(std::int64_t amount, SteadyTime now) {
  if (amount <= remaining(now)) return std::chrono::nanoseconds(0);
  return origin_ + window_ * (window_index_ + 1) - now;
}

void FixedWindowLimiter::take(std::int64_t amount, SteadyTime now) {
  roll_to(now);
  used_ += amount;
}

void FixedWindowLimiter::reset(SteadyTime now) {
  origin_ = now;
  window_index_ = 0;
  used_ = 0;
}

double FixedWindowLimiter::per_second() const {
  return static_cast<double>(limit_) * 1000.0 / static_cast<double>(window_.count());
}

}  // namespace smartlb::sim
