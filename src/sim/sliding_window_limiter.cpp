#include "smartlb/sim/sliding_window_limiter.hpp"

#include <algorithm>

namespace smartlb::sim {

SlidingWindowLimiter::SlidingWindowLimiter(std::int64_t limit, std::chrono::milliseconds window)
    : limit_(limit), window_(std::max(window, std::chrono::milliseconds(1))) {}

void SlidingWindowLimiter::expire(SteadyTime now) {
  // An amount admitted at t counts while now < t + window.
  while (!admitted_.empty() && admitted_.front().at + window_ <= now) {
    used_ -= admitted_.front().amount;
    admitted_.pop_front();
  }
}

std::int64_t SlidingWindowLimiter::remaining(SteadyTime now) {
  expire(now);
  return std::max<std::int64_t>(0, limit_ - used_);
}

std::chrono::nanoseconds SlidingWindowLimiter::wait_until_fits(std::int64_t amount, SteadyTime now) {
  if (amount <= remaining(now)) return std::chrono::nanoseconds(0);
  // Too large to ever fit: wait until the window is empty (at the newest amount's expiry).
  const std::int64_t may_stay = amount > limit_ ? 0 : limit_ - amount;
  std::int64_t staying = used_;
  for (const auto& entry : admitted_) {
    staying -= entry.amount;
    if (staying <= may_stay) return entry.at + window_ - now;
  }
  return std::chrono::nanoseconds(0);  // nothing admitted: only an amount over a zero limit
}

void SlidingWindowLimiter::take(std::int64_t amount, SteadyTime now) {
  expire(now);
  if (amount <= 0) return;
  if (!admitted_.empty() && admitted_.back().at == now) {
    admitted_.back().amount += amount;
  } else {
    admitted_.push_back({now, amount});
  }
  used_ += amount;
}

void SlidingWindowLimiter::reset(SteadyTime) {
  admitted_.clear();
  used_ = 0;
}

double SlidingWindowLimiter::per_second() const {
  return static_cast<double>(limit_) * 1000.0 / static_cast<double>(window_.count());
}

}  // namespace smartlb::sim
