#include "smartlb/routing/sliding_window_budget.hpp"

#include <algorithm>
#include <cmath>

namespace smartlb::routing {

SlidingWindowBudget::SlidingWindowBudget(std::int64_t limit, base::Nanos window, int buckets)
    : limit_(std::max<std::int64_t>(limit, 0)),
      bucket_nanos_(std::max<std::int64_t>(window.count() / std::max(buckets, 1), 1)),
      ring_(static_cast<std::size_t>(std::max(buckets, 1)) + 1) {}

void SlidingWindowBudget::advance(base::MonoNanos now) {
  // Live buckets: indices (current - buckets) .. current. Their span starts at least one full
  // window before `now`, which is what makes the budget conservative. Only the slots that
  // became the current one since the last call can hold an expired bucket.
  const std::int64_t current = now / bucket_nanos_;
  if (current <= advanced_to_) return;
  const auto slots = static_cast<std::int64_t>(ring_.size());
  const std::int64_t from = std::max(advanced_to_ + 1, current - slots + 1);
  for (std::int64_t index = from; index <= current; ++index) {
    Bucket& b = ring_[static_cast<std::size_t>(index % slots)];
    if (b.index >= 0 && b.index < index) {
      used_ -= b.used;
      b = Bucket{};
    }
  }
  advanced_to_ = current;
}

bool SlidingWindowBudget::fits(std::int64_t amount, base::MonoNanos now) {
  advance(now);
  return used_ + amount <= limit_;
}

bool SlidingWindowBudget::try_consume(std::int64_t amount, base::MonoNanos now) {
  if (!fits(amount, now)) return false;
  consume(amount, now);
  return true;
}

std::int64_t SlidingWindowBudget::consume(std::int64_t amount, base::MonoNanos now) {
  advance(now);
  const std::int64_t current = now / bucket_nanos_;
  Bucket& b = ring_[static_cast<std::size_t>(current % static_cast<std::int64_t>(ring_.size()))];
  if (b.index < current) b = Bucket{current, 0};  // empty: advance expired what it held
  b.used += amount;
  used_ += amount;
  return current;
}

void SlidingWindowBudget::adjust(std::int64_t bucket, std::int64_t delta, base::MonoNanos now) {
  if (delta == 0 || bucket < 0) return;
  advance(now);
  Bucket& b = ring_[static_cast<std::size_t>(bucket % static_cast<std::int64_t>(ring_.size()))];
  if (b.index == bucket) {
    const std::int64_t applied = std::max(delta, -b.used);
    b.used += applied;
    used_ += applied;
  } else if (delta > 0) {
    consume(delta, now);
  }
}

std::int64_t SlidingWindowBudget::used(base::MonoNanos now) {
  advance(now);
  return used_;
}

base::Nanos SlidingWindowBudget::until_empty(base::MonoNanos now) {
  advance(now);
  if (used_ == 0) return base::Nanos(0);
  const auto slots = static_cast<std::int64_t>(ring_.size());
  // (Indices below 0 were never filled: a clock that starts at 0 must not index before the ring.)
  for (std::int64_t index = now / bucket_nanos_, oldest = std::max<std::int64_t>(index - slots + 1, 0);
       index >= oldest; --index) {
    const Bucket& b = ring_[static_cast<std::size_t>(index % slots)];
    if (b.index == index && b.used > 0)
      return base::Nanos(std::max<std::int64_t>((index + slots) * bucket_nanos_ - now, 0));
  }
  return base::Nanos(0);
}

base::Nanos SlidingWindowBudget::until_release(base::MonoNanos now) {
  advance(now);
  if (used_ == 0) return base::Nanos(0);
  const auto slots = static_cast<std::int64_t>(ring_.size());
  const std::int64_t current = now / bucket_nanos_;
  for (std::int64_t index = std::max<std::int64_t>(current - slots + 1, 0); index <= current; ++index) {
    const Bucket& b = ring_[static_cast<std::size_t>(index % slots)];
    if (b.index == index && b.used > 0)
      return base::Nanos(std::max<std::int64_t>((index + slots) * bucket_nanos_ - now, 0));
  }
  return base::Nanos(0);
}

std::int64_t demand_shortfall(const std::vector<WindowRelease>& releases, double per_second,
                              std::int64_t least, base::Nanos window) {
  if (per_second <= 0) return 0;
  const auto demand = [&](base::Nanos in) {
    return std::ceil(per_second * static_cast<double>(in.count()) / 1e9);
  };
  // Just before each release, what the demand asked for by then less what came back before it;
  // by the window's end (or the last release: a bucket leaves a bucket's length after it),
  // everything counted now has come back.
  double most = static_cast<double>(least);
  std::int64_t released = 0;
  base::Nanos last = window;
  for (const WindowRelease& r : releases) {
    most = std::max(most, demand(r.in) - static_cast<double>(released));
    released += r.amount;
    last = std::max(last, r.in);
  }
  most = std::max(most, demand(last) - static_cast<double>(released));
  return static_cast<std::int64_t>(std::min(most, 1e15));
}

void SlidingWindowBudget::releases(base::MonoNanos now, std::vector<WindowRelease>& out) {
  advance(now);
  if (used_ == 0) return;
  const auto slots = static_cast<std::int64_t>(ring_.size());
  for (std::int64_t index = std::max<std::int64_t>(now / bucket_nanos_ - slots + 1, 0);
       index <= now / bucket_nanos_; ++index) {
    const Bucket& b = ring_[static_cast<std::size_t>(index % slots)];
    if (b.index == index && b.used > 0)
      out.push_back({base::Nanos(std::max<std::int64_t>((index + slots) * bucket_nanos_ - now, 0)), b.used});
  }
}

std::int64_t SlidingWindowBudget::demand_shortfall(double per_second, std::int64_t least,
                                                   base::MonoNanos now) {
  static thread_local std::vector<WindowRelease> buffer;
  buffer.clear();
  releases(now, buffer);
  return routing::demand_shortfall(buffer, per_second, least, window());
}

base::Nanos SlidingWindowBudget::wait_for(std::int64_t amount, base::MonoNanos now) {
  advance(now);
  if (amount > limit_) return window();
  if (used_ + amount <= limit_) return base::Nanos(0);
  // Expire buckets oldest first until enough is freed; a bucket leaves the live span when
  // `ring_.size()` bucket lengths have passed since its start.
  std::vector<Bucket> live;
  for (const auto& b : ring_)
    if (b.index >= 0 && b.used > 0) live.push_back(b);
  std::sort(live.begin(), live.end(), [](const Bucket& a, const Bucket& b) { return a.index < b.index; });
  std::int64_t freed = 0;
  for (const auto& b : live) {
    freed += b.used;
    if (used_ - freed + amount <= limit_) {
      const std::int64_t expires = (b.index + static_cast<std::int64_t>(ring_.size())) * bucket_nanos_;
      return base::Nanos(std::max<std::int64_t>(expires - now, 0));
    }
  }
  return window();
}

}  // namespace smartlb::routing
