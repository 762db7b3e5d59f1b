#include "smartlb/routing/leased_quota.hpp"

#include <algorithm>
#include <cmath>

#include "smartlb/base/calendar.hpp"

namespace smartlb::routing {

LeasedQuota::LeasedQuota(Options o) : o_(o) {
  o_.subwindows = o_.calendar_months ? 1 : std::max(o_.subwindows, 1);
  sub_ns_ = std::max<std::int64_t>(o_.window.count() / o_.subwindows, 1);
  ring_.assign(static_cast<std::size_t>(o_.subwindows) + 2, Slot{});
}

void LeasedQuota::set_shared(bool shared, std::size_t replicas) {
  replicas_ = std::max<std::size_t>(replicas, 1);
  if (shared == shared_) return;
  shared_ = shared;
  in_flight_ = false;
  store_counted_ = store_counted_in_ = -1;  // what the store counted (with leases void now) is unknown
  // Back to shared: what was taken locally beyond any lease is reported with the next ask.
  // Leases of a lost store are void (it may have restarted empty).
  if (shared) {
    for (Slot& s : ring_) {
      s.leased = 0;
      s.answered = s.spent = false;
      s.bridged = 0;
    }
    unreported_ = true;
  }
}

std::int64_t LeasedQuota::subwindow_of(WallTime t) const {
  if (o_.calendar_months) return calendar_period(base::CalendarPeriod::Month, t).index;
  const auto since_epoch = std::chrono::duration_cast<base::Nanos>(t.time_since_epoch()).count();
  return since_epoch >= 0 ? since_epoch / sub_ns_ : (since_epoch - sub_ns_ + 1) / sub_ns_;
}

LeasedQuota::WallTime LeasedQuota::subwindow_end(std::int64_t subwindow) const {
  if (o_.calendar_months) return base::month_start(subwindow + 1);
  return WallTime(std::chrono::duration_cast<WallTime::duration>(base::Nanos((subwindow + 1) * sub_ns_)));
}

std::int64_t LeasedQuota::now_subwindow(WallTime now) const { return std::max(subwindow_of(now), cur_); }

LeasedQuota::Slot& LeasedQuota::slot(std::int64_t subwindow) {
  const auto n = static_cast<std::int64_t>(ring_.size());
  Slot& s = ring_[static_cast<std::size_t>(((subwindow % n) + n) % n)];
  if (s.subwindow != subwindow) s = Slot{subwindow};
  return s;
}

const LeasedQuota::Slot* LeasedQuota::slot_of(std::int64_t subwindow) const {
  const auto n = static_cast<std::int64_t>(ring_.size());
  const Slot& s = ring_[static_cast<std::size_t>(((subwindow % n) + n) % n)];
  return s.subwindow == subwindow ? &s : nullptr;
}

std::int64_t LeasedQuota::local_taken(std::int64_t subwindow) const {
  std::int64_t sum = 0;
  for (std::int64_t w = counted_from(subwindow); w <= subwindow; ++w)
    if (const Slot* s = slot_of(w)) sum += s->taken;
  return sum;
}

std::int64_t LeasedQuota::local_share() const { return o_.limit / static_cast<std::int64_t>(replicas_); }

bool LeasedQuota::room_for(std::int64_t subwindow, std::int64_t cost) const {
  if (!shared_) return local_taken(subwindow) + cost <= local_share();
  const Slot* found = slot_of(subwindow);
  const Slot& s = found ? *found : Slot{subwindow};
  // Before the store's first answer: a lease's worth on credit, reported with the ask.
  if (bridging(s)) return s.bridged + cost <= std::min(local_share(), lease_size(cost));
  // Reported over-use was counted by the store beside the leases: it is room already paid for.
  return s.taken + cost <= s.leased + s.reported;
}

bool LeasedQuota::fits(std::int64_t cost, WallTime now) const {
  return room_for(now_subwindow(now), std::max<std::int64_t>(cost, 0));
}

bool LeasedQuota::may_fit(std::int64_t cost, WallTime now) const {
  if (fits(cost, now)) return true;
  if (!shared_ || cost > o_.limit) return false;
  const Slot* s = slot_of(now_subwindow(now));
  return !(s && s->spent);
}

base::Nanos LeasedQuota::wait_for(std::int64_t cost, WallTime now) const {
  cost = std::max<std::int64_t>(cost, 0);
  if (fits(cost, now)) return base::Nanos(0);
  const std::int64_t w = now_subwindow(now);
  const auto until = [&](std::int64_t subwindow) {
    return std::max(std::chrono::duration_cast<base::Nanos>(subwindow_end(subwindow) - now), base::Nanos(0));
  };
  if (!shared_) {
    // Each sub-window on forgets the oldest one counted: the first that leaves room.
    std::int64_t sum = local_taken(w);
    for (std::int64_t from = counted_from(w); from < w; ++from) {
      if (const Slot* s = slot_of(from)) sum -= s->taken;
      if (sum + cost <= local_share()) return until(from + w - counted_from(w));
    }
    return until(w + (w - counted_from(w)));  // only once all counted now is forgotten, if ever
  }
  if (cost > o_.limit) return until(w + (w - counted_from(w)));
  const Slot* s = slot_of(w);
  if (s && s->spent) return until(w);
  return std::min(o_.horizon, until(w));
}

bool LeasedQuota::try_take(std::int64_t cost, WallTime now) {
  const std::int64_t w = now_subwindow(now);
  cur_ = w;
  cost = std::max<std::int64_t>(cost, 0);
  if (!room_for(w, cost)) return false;
  Slot& s = slot(w);
  if (bridging(s)) s.bridged += cost;
  if (!shared_ || bridging(s)) unreported_ = true;  // else the lease covers it
  s.taken += cost;
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

void LeasedQuota::adjust(std::int64_t subwindow, std::int64_t delta) {
  if (slot_of(subwindow)) {
    Slot& s = slot(subwindow);
    s.taken = std::max<std::int64_t>(s.taken + delta, 0);
    if (delta > 0) unreported_ = true;
  }
}

std::int64_t LeasedQuota::lease_size(std::int64_t need) const {
  // A lease lapses at its sub-window's end: never more than a sub-window's worth of the rate.
  const double horizon = std::chrono::duration<double>(std::min(o_.horizon, base::Nanos(sub_ns_))).count();
  const auto by_rate = static_cast<std::int64_t>(std::ceil(rate_ * horizon));
  // At least two requests' worth: a lease smaller than a request would refuse it.
  const auto by_cost = static_cast<std::int64_t>(std::ceil(2 * avg_cost_));
  const std::int64_t size = std::max({by_rate, by_cost, o_.min_lease, need});
  return std::min(size, std::max<std::int64_t>(o_.limit, 1));
}

std::optional<LeasedQuota::Ask> LeasedQuota::ask(WallTime now, std::int64_t need) {
  if (!shared_ || in_flight_ || o_.limit <= 0) return std::nullopt;
  const std::int64_t w = now_subwindow(now);
  cur_ = w;
  // Taken beyond what was granted (while local) goes to the store first, in any case: the
  // current sub-window's and that of the ones still counted with it.
  const auto unreported = [](const Slot& s) {
    return std::max<std::int64_t>(s.taken - s.leased - s.reported, 0);
  };
  // The k + 1 sub-windows are looked at only when something may have been taken beyond a lease
  // (while local, on credit, a correction upwards): this runs on every request.
  std::int64_t earlier = 0;
  if (unreported_)
    for (std::int64_t p = counted_from(w); p < w; ++p)
      if (const Slot* s = slot_of(p)) earlier += unreported(*s);
  const Slot& cur = slot(w);
  const std::int64_t unreported_now = unreported_ ? unreported(cur) : 0;
  if (earlier + unreported_now == 0) unreported_ = false;
  const Slot& next = slot(w + 1);
  const std::int64_t left = cur.leased + cur.reported - cur.taken;
  const std::int64_t low = std::max<std::int64_t>(last_lease_ / 2, need);
  // The last sub-window's leftover goes back (with any ask; alone, if none is due), so that
  // what a replica holds unused at a sub-window's end is not lost to the others for a window.
  Slot* last = slot_of(w - 1) ? &slot(w - 1) : nullptr;
  const std::int64_t leftover =
      last ? std::max<std::int64_t>(last->leased + last->reported - last->taken, 0) : 0;
  // In the last half-horizon of a sub-window the next one's first lease comes first, so that
  // its first requests find one: under overload the current sub-window is always short, and
  // asks for it would otherwise take every turn (one ask at a time) until the next had begun.
  const bool next_due =
      !next.answered && now + std::min(o_.horizon, base::Nanos(sub_ns_)) / 2 >= subwindow_end(w);
  std::optional<Ask> a;
  if (unreported_now + earlier > 0) {
    a = Ask{w, lease_size(need), unreported_now + earlier, earlier};
  } else if (next_due) {
    a = Ask{w + 1, lease_size(0), 0, 0};
  } else if (need > left || left < low) {
    a = Ask{w, lease_size(need), 0, 0};
  } else if (leftover > 0) {
    a = Ask{w, 0, 0, 0};
  }
  if (a && leftover > 0) {
    a->returned_subwindow = w - 1;
    a->returned = leftover;
    // What the store counts there from now on (if the ask fails, it counts more: on the safe side).
    last->leased -= leftover;
  }
  if (a) in_flight_ = true;
  return a;
}

void LeasedQuota::granted(const Ask& a, std::int64_t tokens, WallTime now, std::int64_t counted,
                          std::int64_t oldest) {
  in_flight_ = false;
  const std::int64_t w = now_subwindow(now);
  cur_ = w;
  if (counted >= 0) {
    store_counted_ = counted;
    store_counted_in_ = w;
    store_counted_at_ = now;
    store_oldest_ = oldest;
  }
  tokens = std::max<std::int64_t>(tokens, 0);
  // What was reported of the earlier sub-windows is known to the store now.
  for (std::int64_t p = counted_from(a.subwindow); p < a.subwindow; ++p)
    if (slot_of(p)) {
      Slot& s = slot(p);
      s.reported = std::max(s.reported, s.taken - s.leased);
    }
  if (tokens < a.tokens) spent_in_ = std::max(spent_in_, a.subwindow);
  if (slot_of(a.subwindow)) {
    Slot& s = slot(a.subwindow);
    s.reported += a.used - a.earlier;
    if (a.subwindow >= w) {  // a sub-window already gone: its grant is void
      s.leased += tokens;
      s.answered = true;
      if (tokens < a.tokens) s.spent = true;
    }
  } else if (a.subwindow == w + 1) {
    Slot& s = slot(a.subwindow);
    s.leased += tokens;
    s.answered = true;
    if (tokens < a.tokens) s.spent = true;
  }
  if (tokens > 0) last_lease_ = tokens;
}

bool LeasedQuota::store_count_fresh(WallTime now) const {
  // (A wall clock stepped back: the count's age is unknown, so it is not trusted either.)
  return shared_ && store_counted_ >= 0 && store_counted_in_ >= now_subwindow(now) - 1 &&
         now >= store_counted_at_ && now - store_counted_at_ <= kCountFreshFor;
}

std::optional<std::int64_t> LeasedQuota::left_everywhere(WallTime now) const {
  const std::int64_t w = now_subwindow(now);
  if (!store_count_fresh(now)) return std::nullopt;
  // Held and not taken: this sub-window's lease and the next one's, asked ahead (as room_for:
  // what was reported beyond the leases is paid for).
  // Taken beyond the leases and not reported yet is not in the store's count: it comes off too.
  std::int64_t own = 0;
  for (std::int64_t p = w; p <= w + 1; ++p)
    if (const Slot* s = slot_of(p)) own += s->leased + s->reported - s->taken;
  return std::max<std::int64_t>(o_.limit - store_counted_ + own, 0);
}

std::optional<base::Nanos> LeasedQuota::until_store_release(WallTime now) const {
  if (!store_count_fresh(now) || store_oldest_ < 0) return std::nullopt;
  // A sub-window stops counting once the asks' first counted one is past it (counted_from).
  const WallTime released = subwindow_end(o_.subwindows > 1 ? store_oldest_ + o_.subwindows : store_oldest_);
  return std::max<base::Nanos>(std::chrono::duration_cast<base::Nanos>(released - now), base::Nanos{0});
}

LeasedQuota::View LeasedQuota::view() const {
  View v;
  if (const Slot* s = slot_of(cur_)) v = {s->subwindow, s->leased, s->taken, 0, in_flight_};
  if (const Slot* n = slot_of(cur_ + 1)) v.next_leased = n->leased;
  v.in_flight = in_flight_;
  v.shared = shared_;
  if (shared_) {
    v.counted = store_counted_;
    if (store_counted_ >= 0) v.oldest_counted = store_oldest_;
  }
  return v;
}

}  // namespace smartlb::routing
