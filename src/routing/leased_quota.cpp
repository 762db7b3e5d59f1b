#include "smartlb/routing/leased_quota.hpp"

#include <algorithm>
#include <cmath>

namespace smartlb {

void LeasedQuota::set_shared(bool shared, std::size_t replicas) {
  replicas_ = std::max<std::size_t>(replicas, 1);
  if (shared == shared_) return;
  shared_ = shared;
  in_flight_ = false;
  // Back to shared: what was taken locally beyond any lease is reported with the next ask.
  // Leases of a lost store are void (it may have restarted empty).
  if (shared)
    for (Slot* s : {&cur_, &next_}) {
      s->leased = 0;
      s->answered = s->spent = false;
      s->bridged = 0;
    }
}

std::int64_t LeasedQuota::window_of(WallTime t) const {
  const auto since_epoch = std::chrono::duration_cast<Nanos>(t.time_since_epoch()).count();
  const auto w = std::max<std::int64_t>(o_.window.count(), 1);
  return since_epoch >= 0 ? since_epoch / w : (since_epoch - w + 1) / w;
}

LeasedQuota::WallTime LeasedQuota::window_end(std::int64_t window) const {
  return WallTime(std::chrono::duration_cast<WallTime::duration>(Nanos((window + 1) * o_.window.count())));
}

void LeasedQuota::roll(std::int64_t window) {
  if (cur_.window == window) return;
  if (next_.window == window) {
    cur_ = next_;
  } else {
    cur_ = Slot{window};
  }
  next_ = Slot{window + 1};
}

std::int64_t LeasedQuota::local_share() const { return o_.limit / static_cast<std::int64_t>(replicas_); }

const LeasedQuota::Slot* LeasedQuota::slot_of(std::int64_t window) const {
  if (cur_.window == window) return &cur_;
  if (next_.window == window) return &next_;
  return nullptr;
}

bool LeasedQuota::room_for(const Slot& s, std::int64_t cost) const {
  if (!shared_) return s.taken + cost <= local_share();
  // Before the store's first answer: a lease's worth on credit, reported with the ask.
  if (bridging(s)) return s.bridged + cost <= std::min(local_share(), lease_size(cost));
  // Reported over-use was counted by the store beside the leases: it is room already paid for.
  return s.taken + cost <= s.leased + s.reported;
}

bool LeasedQuota::fits(std::int64_t cost, WallTime now) const {
  cost = std::max<std::int64_t>(cost, 0);
  const std::int64_t w = window_of(now);
  const Slot* s = slot_of(w);
  return room_for(s ? *s : Slot{w}, cost);
}

bool LeasedQuota::may_fit(std::int64_t cost, WallTime now) const {
  if (fits(cost, now)) return true;
  if (!shared_ || cost > o_.limit) return false;
  const Slot* s = slot_of(window_of(now));
  return !(s && s->spent);
}

Nanos LeasedQuota::wait_for(std::int64_t cost, WallTime now) const {
  if (fits(cost, now)) return Nanos(0);
  const std::int64_t w = window_of(now);
  const Slot* s = slot_of(w);
  const auto to_end = std::chrono::duration_cast<Nanos>(window_end(w) - now);
  if (!shared_ || cost > o_.limit || (s && s->spent)) return std::max(to_end, Nanos(0));
  return std::min(o_.horizon, to_end);
}

bool LeasedQuota::try_take(std::int64_t cost, WallTime now) {
  roll(window_of(now));
  cost = std::max<std::int64_t>(cost, 0);
  if (!room_for(cur_, cost)) return false;
  if (bridging(cur_)) cur_.bridged += cost;
  cur_.taken += cost;
  avg_cost_ = avg_cost_ == 0 ? static_cast<double>(cost) : 0.9 * avg_cost_ + 0.1 * static_cast<double>(cost);
  // The rate, over intervals of at least 100 ms.
  rate_tokens_ += cost;
  const double dt = std::chrono::duration<double>(now - rate_at_).count();
  if (rate_at_ == WallTime{}) {
    rate_at_ = now;
  } else if (dt >= 0.1) {
    const double sample = static_cast<double>(rate_tokens_) / dt;
    rate_ = rate_ == 0 ? sample : 0.7 * rate_ + 0.3 * sample;
    rate_tokens_ = 0;
    rate_at_ = now;
  }
  return true;
}

void LeasedQuota::adjust(std::int64_t window, std::int64_t delta) {
  for (Slot* s : {&cur_, &next_})
    if (s->window == window) s->taken = std::max<std::int64_t>(s->taken + delta, 0);
}

std::int64_t LeasedQuota::lease_size(std::int64_t need) const {
  const double horizon = std::chrono::duration<double>(o_.horizon).count();
  const auto by_rate = static_cast<std::int64_t>(std::ceil(rate_ * horizon));
  // At least two requests' worth: a lease smaller than a request would refuse it.
  const auto by_cost = static_cast<std::int64_t>(std::ceil(2 * avg_cost_));
  const std::int64_t size = std::max({by_rate, by_cost, o_.min_lease, need});
  return std::min(size, std::max<std::int64_t>(o_.limit, 1));
}

std::optional<LeasedQuota::Ask> LeasedQuota::ask(WallTime now, std::int64_t need) {
  if (!shared_ || in_flight_ || o_.limit <= 0) return std::nullopt;
  roll(window_of(now));
  // Taken beyond what was granted (while local) goes to the store first, in any case.
  const auto unreported = [](const Slot& s) {
    return std::max<std::int64_t>(s.taken - s.leased - s.reported, 0);
  };
  const std::int64_t left = cur_.leased + cur_.reported - cur_.taken;
  const std::int64_t low = std::max<std::int64_t>(last_lease_ / 2, need);
  std::optional<Ask> a;
  if (need > left || left < low || unreported(cur_) > 0) {
    a = Ask{cur_.window, lease_size(need), unreported(cur_)};
  } else if (now + o_.horizon >= window_end(cur_.window) && next_.leased == 0) {
    // Before the window ends: the next one's first lease, so its first requests find one.
    a = Ask{next_.window, lease_size(0), 0};
  }
  if (a) in_flight_ = true;
  return a;
}

void LeasedQuota::granted(const Ask& a, std::int64_t tokens, WallTime now) {
  in_flight_ = false;
  roll(std::max(window_of(now), cur_.window));
  tokens = std::max<std::int64_t>(tokens, 0);
  for (Slot* s : {&cur_, &next_}) {
    if (s->window != a.window) continue;  // a window already gone: its grant is void
    s->leased += tokens;
    s->reported += a.used;
    s->answered = true;
    if (tokens < a.tokens) s->spent = true;
  }
  if (tokens > 0) last_lease_ = tokens;
}

}  // namespace smartlb
