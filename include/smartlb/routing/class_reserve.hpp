#pragma once
// What a request of a lower priority class leaves at a target for the classes above it
// (clients/priority_classes, docs/client-budgets.md): their demand there until room comes back
// -- their recent rate over the horizon until the limit gives room again, at least
// kReserveHorizon -- and never more than the class's share of the limit. A reserve that follows
// demand keeps the whole quota in use: while the classes above ask for nothing, it is nothing;
// a fixed share would be idle capacity whenever they need less than it.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

// The least horizon a reserve covers: a sliding window gives room back almost continuously,
// but requests do not arrive evenly.
inline constexpr base::Nanos kReserveHorizon = std::chrono::milliseconds(200);

struct ClassReserve {
  std::uint8_t level = 0;          // 0: the first class, which leaves nothing
  std::uint16_t cap_permille = 0;  // the most it leaves, as a share of the limit
  // The classes above it at this target, per second (BackendStates fills them in).
  double tokens_per_second = 0, requests_per_second = 0;
  // What its pool's declared quotas keep between them was checked (BackendStates::pool_reserve):
  // each member's declared window need only fit the request's cost. (What a backend reports of
  // its own limiter is still checked member by member.)
  bool pool_checked = false;
  // ... and so were the reports of its members without a declared quota (each sliding window
  // whose echo of smartlb's own sends is known): each need only fit the request's cost there too.
  bool reports_checked = false;
  bool any() const { return level > 0 && cap_permille > 0; }
  ClassReserve checked_by_pool(bool reports = false) const {
    ClassReserve r = *this;
    r.pool_checked = true;
    r.reports_checked = reports;
    return r;
  }
};

// The amount to leave in a limit of `limit`: `per_second` of demand over `horizon`, at most the
// class's share of the limit. 0 when the limit is unknown (<= 0) or the class leaves nothing.
inline std::int64_t reserve_amount(const ClassReserve& r, double per_second, base::Nanos horizon,
                                   std::int64_t limit) {
  if (!r.any() || limit <= 0 || per_second <= 0) return 0;
  const double demand = std::ceil(per_second * static_cast<double>(horizon.count()) / 1e9);
  const std::int64_t cap = (limit * r.cap_permille + 999) / 1000;
  return std::min(cap, static_cast<std::int64_t>(std::min(demand, 1e15)));
}

// `amount` (a demand worked out elsewhere: SlidingWindowBudget::demand_shortfall) as the
// class may leave it: at most its share of the limit; 0 when it leaves nothing.
inline std::int64_t reserve_capped(const ClassReserve& r, std::int64_t amount, std::int64_t limit) {
  if (!r.any() || limit <= 0 || amount <= 0) return 0;
  return std::min((limit * r.cap_permille + 999) / 1000, amount);
}

// What a request of `cost` needs of a limit of `limit` with `reserve` left: its cost and the
// reserve, but never more than the whole limit (a request larger than what the reserve leaves
// goes when the window is empty, not never).
constexpr std::int64_t with_reserve(std::int64_t cost, std::int64_t limit, std::int64_t reserve) {
  if (reserve <= 0) return cost;
  return std::max(cost, limit > 0 ? std::min(cost + reserve, limit) : cost + reserve);
}

// The demand of each priority class at one target: tokens and requests sent, decayed over a
// few seconds, plus what the other replicas send there (redis::SharedClassDemand: with
// several replicas, the interactive requests one replica sends are demand that the batch
// requests another sends must leave room for). Thread-safe (a mutex: only requests of a
// deployment with classes in use add).
class ClassDemand {
 public:
  static constexpr std::size_t kLevels = 8;
  static constexpr double kTauNanos = 2e9;  // the rate follows about the last 2 s
  struct Rate {
    double tokens_per_second = 0, requests_per_second = 0;
  };
  using Rates = std::array<Rate, kLevels>;

  // `share`: the part of one request counted here (a refused request, spread by weight).
  void add(std::size_t level, std::int64_t tokens, base::MonoNanos now, double share = 1) {
    if (level >= kLevels) level = kLevels - 1;
    std::lock_guard lock(mutex_);
    Level& l = levels_[level];
    const double decay = std::exp(-static_cast<double>(std::max<base::MonoNanos>(now - l.at, 0)) / kTauNanos);
    l.tokens = l.tokens * decay + share * static_cast<double>(std::max<std::int64_t>(tokens, 1));
    l.requests = l.requests * decay + share;
    l.at = now;
  }
  // The rate of the levels before `level`, per second: this replica's and, until they expire,
  // the others'.
  void above(std::size_t level, base::MonoNanos now, double& tokens_per_second,
             double& requests_per_second) const {
    tokens_per_second = requests_per_second = 0;
    std::lock_guard lock(mutex_);
    const bool remote = now < remote_until_;
    for (std::size_t i = 0; i < level && i < kLevels; ++i) {
      const Rate r = rate_locked(i, now);
      tokens_per_second += r.tokens_per_second;
      requests_per_second += r.requests_per_second;
      if (!remote) continue;
      tokens_per_second += remote_[i].tokens_per_second;
      requests_per_second += remote_[i].requests_per_second;
    }
  }
  // This replica's own rate of each level (what it tells the others).
  Rates local(base::MonoNanos now) const {
    Rates out;
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < kLevels; ++i) out[i] = rate_locked(i, now);
    return out;
  }
  // The other replicas' rates here, summed: counted until `until`, unless replaced before.
  void set_remote(const Rates& rates, base::MonoNanos until) {
    std::lock_guard lock(mutex_);
    remote_ = rates;
    remote_until_ = until;
  }

 private:
  struct Level {
    double tokens = 0, requests = 0;  // decayed sums
    base::MonoNanos at = 0;
  };
  Rate rate_locked(std::size_t i, base::MonoNanos now) const {
    const Level& l = levels_[i];
    if (l.requests == 0) return {};
    const double per_second =
        std::exp(-static_cast<double>(std::max<base::MonoNanos>(now - l.at, 0)) / kTauNanos) * 1e9 /
        kTauNanos;
    return {l.tokens * per_second, l.requests * per_second};
  }
  mutable std::mutex mutex_;
  Level levels_[kLevels];
  Rates remote_{};
  base::MonoNanos remote_until_ = 0;
};

}  // namespace smartlb::routing
