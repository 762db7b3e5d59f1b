#include "smartlb/sim/token_bucket_limiter.hpp"

#include <algorithm>

namespace smartlb::sim {

std::int64_t TokenBucketLimiter::capacity_for(std::int64_t limit, std::chrono::milliseconds window,
                                              std::chrono::milliseconds burst) {
  if (limit <= 0) return 0;
  const auto window_ms = std::max<std::int64_t>(window.count(), 1);
  const Scaled scaled = Scaled(limit) * std::max<std::int64_t>(burst.count(), 0) / window_ms;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(scaled));
}

TokenBucketLimiter::TokenBucketLimiter(std::int64_t limit, std::chrono::milliseconds window,
                                       std::chrono::milliseconds burst, SteadyTime origin)
    : limit_(std::max<std::int64_t>(limit, 0)),
      window_ns_(std::chrono::nanoseconds(std::max(window, std::chrono::milliseconds(1))).count()),
      capacity_(capacity_for(limit, window, burst)),
      level_(Scaled(capacity_) * window_ns_),
      last_refill_(origin) {}

void TokenBucketLimiter::refill(SteadyTime now) {
  if (now <= last_refill_) return;
  const Scaled full = Scaled(capacity_) * window_ns_;
  const Scaled elapsed = (now - last_refill_).count();
  level_ = std::min(full, level_ + elapsed * limit_);
  last_refill_ = now;
}

std::int64_t TokenBucketLimiter::remaining(SteadyTime now) {
  refill(now);
  return static_cast<std::int64_t>(level_ / window_ns_);
}

std::chrono::nanoseconds TokenBucketLimiter::wait_until_fits(std::int64_t amount, SteadyTime now) {
  refill(now);
  const Scaled wanted = Scaled(std::min(amount, capacity_)) * window_ns_;
  if (level_ >= wanted || limit_ == 0) return std::chrono::nanoseconds(0);
  const Scaled missing = wanted - level_;
  return std::chrono::nanoseconds(static_cast<std::int64_t>((missing + limit_ - 1) / limit_));
}

void TokenBucketLimiter::take(std::int64_t amount, SteadyTime now) {
  refill(now);
  level_ -= Scaled(amount) * window_ns_;
}

void TokenBucketLimiter::reset(SteadyTime now) {
  level_ = Scaled(capacity_) * window_ns_;
  last_refill_ = now;
}

double TokenBucketLimiter::per_second() const {
  return static_cast<double>(limit_) * 1e9 / static_cast<double>(window_ns_);
}

}  // namespace smartlb::sim
