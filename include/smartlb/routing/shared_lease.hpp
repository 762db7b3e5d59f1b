#pragma once
// A LeasedQuota as its owner keeps it (docs/scale-out.md, "Shared quotas"): named the same on
// every replica, guarded by the owner's own lock (the Quota's or the ClientBudget's, so the
// request path takes no extra one), and a LeaseBroker that carries its asks to the store. Only
// made when quotas are shared (REDIS_URL): without it, owners hold no lease at all.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "smartlb/routing/leased_quota.hpp"

namespace smartlb::routing {

// A lease is never smaller than this fraction of the limit (0.1 %): before a replica has
// learnt its rate (its first ~100 ms of traffic on a quota), leases of two requests' worth
// would run dry under concurrent requests while the next ask is out; with N replicas at most
// N x 0.1 % of a window is left unused at its end by this.
inline constexpr std::int64_t kMinLeaseDivisor = 1000;

struct SharedLease {
  SharedLease(std::string name, std::mutex& owner_mutex, LeasedQuota::Options options)
      : name(std::move(name)),
        mutex(owner_mutex),
        quota(options),
        limit(options.limit),
        window(options.window),
        subwindows(quota.subwindows()) {}

  // A new limit (a reload): under `mutex`.
  void set_limit(std::int64_t l) {
    quota.set_limit(l);
    limit.store(l, std::memory_order_relaxed);
  }

  const std::string name;  // across replicas, e.g. "eastus/gpt-4o:tokens"
  std::mutex& mutex;       // the owner's lock: guards `quota`
  LeasedQuota quota;
  std::atomic<std::int64_t> limit;  // = quota.limit(), readable without the lock
  const base::Nanos window;
  const int subwindows;             // = quota.subwindows(): 1 for fixed windows
  std::atomic<bool> active{false};  // taken from since the broker last looked
};

// Carries asks to the store and answers back (redis::SharedQuotas). Leases never move and live
// as long as their owners (for the process): the broker keeps pointers to them.
class LeaseBroker {
 public:
  virtual ~LeaseBroker() = default;
  // A new lease, not yet used: the broker sets its mode (shared or local) and looks at it
  // from now on. Called with no lease's lock held.
  virtual void attach(SharedLease& lease) = 0;
  // Sends `ask` (LeasedQuota::ask's) to the store; the answer is handed to lease.quota under
  // lease.mutex later, on another thread. Called without lease.mutex held; returns at once.
  virtual void send(SharedLease& lease, const LeasedQuota::Ask& ask) = 0;
};

// A pending ask taken under the owner's lock, sent after it is released.
struct PendingAsk {
  SharedLease* lease = nullptr;
  LeasedQuota::Ask ask;
};

// Takes `cost` from `lease` at `now` (the caller holds lease.mutex) and, whether it fits or
// not, notes in `out` what to ask the store for next (send it once the lock is released).
inline bool take_leased(SharedLease& lease, std::int64_t cost, LeasedQuota::WallTime now, PendingAsk& out) {
  const bool ok = lease.quota.try_take(cost, now);
  if (ok) lease.active.store(true, std::memory_order_relaxed);
  if (auto a = lease.quota.ask(now, ok ? 0 : cost)) out = {&lease, *a};
  return ok;
}

inline void send_pending(LeaseBroker* broker, const PendingAsk& p) {
  if (broker && p.lease) broker->send(*p.lease, p.ask);
}

}  // namespace smartlb::routing
