// BackendStates' declared quotas (BACKEND_X_TPM / RPM, usage_limits, quota groups): their
// budgets, the leases shared with other replicas, and what a lower priority class leaves of them
// (routing/class_reserve.hpp).
#include <algorithm>
#include <cmath>
#include <mutex>

#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/class_reserve.hpp"

namespace smartlb::routing {
namespace {

// What a request of `cost` needs of a limit, with what its class leaves to the classes above:
// their demand until the window next gives room back (at least kReserveHorizon). `horizon`:
// that time (0 for a lease: its store's window is not seen here).
std::int64_t need_of(std::int64_t cost, std::int64_t limit, const ClassReserve& cls, double per_second,
                     base::Nanos horizon) {
  return with_reserve(cost, limit,
                      reserve_amount(cls, per_second, std::max(horizon, kReserveHorizon), limit));
}
std::int64_t tokens_need(std::int64_t cost, std::int64_t limit, const ClassReserve& cls,
                         base::Nanos horizon = {}) {
  return need_of(cost, limit, cls, cls.tokens_per_second, horizon);
}
std::int64_t requests_need(std::int64_t limit, const ClassReserve& cls, base::Nanos horizon = {}) {
  return need_of(1, limit, cls, cls.requests_per_second, horizon);
}
// The same for a declared budget, whose window says what it gives back when: the demand above
// that its releases do not cover, over any horizon up to the window (demand_shortfall).
// Measured: with the window's next release as the only horizon, a lower class took what one
// release gave back while the next ones would give back less than the classes above ask for
// (what the window had refused them a window earlier), and they were refused again then.
// `leased`: the quota is shared with other replicas, whose sends are not in this window, and
// the demand above is largely theirs: their room is their lease's to keep (below), and this
// window's horizon stays its next release.
std::int64_t declared_need(std::int64_t cost, SlidingWindowBudget& b, const ClassReserve& cls,
                           double per_second, base::MonoNanos now, bool leased) {
  if (!cls.any() || cls.pool_checked) return cost;
  if (leased) return need_of(cost, b.limit(), cls, per_second, b.until_release(now));
  const std::int64_t least = reserve_amount(cls, per_second, kReserveHorizon, b.limit());
  return with_reserve(cost, b.limit(),
                      reserve_capped(cls, b.demand_shortfall(per_second, least, now), b.limit()));
}
std::int64_t tokens_need(std::int64_t cost, SlidingWindowBudget& b, const ClassReserve& cls,
                         base::MonoNanos now, bool leased) {
  return declared_need(cost, b, cls, cls.tokens_per_second, now, leased);
}
std::int64_t requests_need(SlidingWindowBudget& b, const ClassReserve& cls, base::MonoNanos now,
                           bool leased) {
  return declared_need(1, b, cls, cls.requests_per_second, now, leased);
}
std::int64_t lease_limit(const SharedLease& lease) { return lease.limit.load(std::memory_order_relaxed); }
// The same for a lease: until the store gives room back, as it said at its last answer (the
// window all replicas use, not this replica's own: a batch replica's own window would grow the
// horizon while its requests are refused -- measured: batch locked out, 4.7 % of the quota
// idle); the least horizon when the store's count is not known.
std::int64_t tokens_need(std::int64_t cost, const SharedLease& lease, const ClassReserve& cls,
                         LeasedQuota::WallTime wall) {
  return cls.any() ? tokens_need(cost, lease_limit(lease), cls,
                                 lease.quota.until_store_release(wall).value_or(base::Nanos{0}))
                   : cost;
}
std::int64_t requests_need(const SharedLease& lease, const ClassReserve& cls, LeasedQuota::WallTime wall) {
  return cls.any() ? requests_need(lease_limit(lease), cls,
                                   lease.quota.until_store_release(wall).value_or(base::Nanos{0}))
                   : 1;
}
// Whether a lease may still hold `need` (`cost` and, for a lower class, its reserve). With a
// reserve, also whether `need` fits in what no other replica holds yet
// (LeasedQuota::left_everywhere): its own lease knows nothing of what the other replicas'
// higher classes still need. Without one (nothing asked above it), exactly as for any request.
bool lease_may_fit(const SharedLease& lease, std::int64_t cost, std::int64_t need,
                   LeasedQuota::WallTime wall) {
  if (!lease.quota.may_fit(need, wall)) return false;
  if (need <= cost) return true;
  const std::optional<std::int64_t> left = lease.quota.left_everywhere(wall);
  return !left || *left >= need;
}

}  // namespace

bool BackendStates::Quota::sync(const PoolMember& m) {
  if (window != m.quota_window) {  // a new window: budgets counted over another length start afresh
    tokens.reset();
    requests.reset();
    window = m.quota_window;
  }
  const auto limit_to = [&](std::optional<SlidingWindowBudget>& budget, std::int64_t limit) {
    if (limit <= 0)
      budget.reset();
    else if (!budget)
      budget.emplace(limit, window);
    else if (budget->limit() != limit)
      budget->set_limit(limit);
  };
  limit_to(tokens, m.tokens_per_window);
  limit_to(requests, m.requests_per_window);
  if (tokens_lease && m.tokens_per_window > 0 &&
      tokens_lease->limit.load(std::memory_order_relaxed) != m.tokens_per_window)
    tokens_lease->set_limit(m.tokens_per_window);
  if (requests_lease && m.requests_per_window > 0 &&
      requests_lease->limit.load(std::memory_order_relaxed) != m.requests_per_window)
    requests_lease->set_limit(m.requests_per_window);
  return (m.tokens_per_window > 0 && !tokens_lease) || (m.requests_per_window > 0 && !requests_lease);
}

bool BackendStates::Quota::fits(const PoolMember& m, std::int64_t cost, base::MonoNanos now,
                                const base::Clock& clock, ClassReserve cls) {
  std::lock_guard lock(quota_mutex);
  sync(m);
  if ((tokens && !tokens->fits(tokens_need(cost, *tokens, cls, now, tokens_lease != nullptr), now)) ||
      (requests && !requests->fits(requests_need(*requests, cls, now, requests_lease != nullptr), now)))
    return false;
  if (!tokens_lease && !requests_lease) return true;
  // A lease yet to come does not hide the member: its reserve() asks for one.
  const auto wall = clock.wall_now();
  return (!tokens_lease ||
          lease_may_fit(*tokens_lease, cost, tokens_need(cost, *tokens_lease, cls, wall), wall)) &&
         (!requests_lease ||
          lease_may_fit(*requests_lease, 1, requests_need(*requests_lease, cls, wall), wall));
}

void BackendStates::Quota::add_to_pool(const PoolMember& m, base::MonoNanos now, const ClassReserve& above,
                                       PoolSum& tokens_sum, PoolSum& requests_sum) {
  std::lock_guard lock(quota_mutex);
  sync(m);
  const auto add = [&](std::optional<SlidingWindowBudget>& b, double per_second, PoolSum& sum) {
    if (!b) {
      sum.unbounded = true;
      return;
    }
    sum.left += b->limit() - b->used(now);
    sum.limit += b->limit();
    sum.per_second += per_second;
    sum.window = std::max(sum.window, b->window());
    b->releases(now, sum.releases);
  };
  add(tokens, above.tokens_per_second, tokens_sum);
  add(requests, above.requests_per_second, requests_sum);
}

bool BackendStates::in_service(const PoolMember& m, const DeploymentState* d, base::MonoNanos now) const {
  const BackendState& s = state(m.id);
  return s.backend.until.load(std::memory_order_relaxed) <= now && admin_out(m, d) <= now &&
         s.unhealthy_until.load(std::memory_order_relaxed) <= now &&
         (d == nullptr || d->until.load(std::memory_order_relaxed) <= now);
}

BackendStates::PoolReserve BackendStates::pool_reserve(const RoutingTable& table, std::string_view deployment,
                                                       std::int64_t cost, ClassReserve cls) const {
  // With leases, what the other replicas hold is not in this replica's windows.
  if (!cls.any() || broker_ != nullptr) return PoolReserve::Unbounded;
  const base::MonoNanos now = clock_.now();
  PoolSum tokens_sum, requests_sum;
  std::vector<const Quota*> counted;  // members of one quota group share its windows
  bool reports = false;               // a member's reports were counted
  const auto add_reported = [](std::int64_t left, std::int64_t limit, base::Nanos window, double per_second,
                               PoolSum& sum) {
    sum.left += std::max<std::int64_t>(left, 0);
    sum.limit += limit;
    sum.per_second += per_second;
    sum.window = std::max(sum.window, window);
  };
  for (const PoolMember& m : table.members()) {
    // A member out of service (cooling down, held, unhealthy): its room is no one's, but the
    // demand above it still counts. It goes to the others now, whose rates follow it only over
    // a few seconds; the rates are decayed sums, so the members' together are the pool's. (Left
    // out, a member cooling down for the 1.8 s a sliding window had refused a window earlier
    // took half the demand with it, and the interactive requests were refused at its end.) One
    // only short of room is in.
    DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
    ClassReserve above = cls;
    with_demand(d, above, now);
    if (!in_service(m, d, now)) {
      tokens_sum.per_second += above.tokens_per_second;
      requests_sum.per_second += above.requests_per_second;
      continue;
    }
    if (!m.has_quota()) {
      // No declared quota: its reports, where they and the echo of smartlb's own sends say what
      // its sliding window has left and gives back (else each member keeps its own reserve).
      ReportedBudget::PoolShare share;
      if (d == nullptr || !d->reported.pool_share(now, share, tokens_sum.releases, requests_sum.releases))
        return PoolReserve::Unbounded;
      add_reported(share.tokens_left, share.tokens_limit, share.window, above.tokens_per_second, tokens_sum);
      if (share.requests_known) {
        add_reported(share.requests_left, share.requests_limit, share.window, above.requests_per_second,
                     requests_sum);
      } else {
        requests_sum.unbounded = true;
      }
      reports = true;
      continue;
    }
    if (Quota* q = find_quota_of(m, deployment, d)) {
      if (std::find(counted.begin(), counted.end(), q) == counted.end()) {
        counted.push_back(q);
        q->add_to_pool(m, now, above, tokens_sum, requests_sum);
      } else {
        tokens_sum.per_second += above.tokens_per_second;  // its demand, not its room again
        requests_sum.per_second += above.requests_per_second;
      }
      continue;
    }
    // Nothing sent there yet: all of it is left.
    const auto add_unused = [&](std::int64_t limit, PoolSum& sum) {
      if (limit <= 0) sum.unbounded = true;
      sum.left += limit;
      sum.limit += limit;
    };
    add_unused(m.tokens_per_window, tokens_sum);
    add_unused(m.requests_per_window, requests_sum);
  }
  if (tokens_sum.unbounded && requests_sum.unbounded) return PoolReserve::Unbounded;
  // Never less than the next request above (the average one): a pool keeps no more idle than
  // that while its windows give back what the classes above ask for. (0.2 s of their demand,
  // the least a single member keeps, left 1.3 % of the pool idle.)
  const auto holds = [&](PoolSum& sum, std::int64_t own, std::int64_t next_above) {
    if (sum.unbounded || sum.limit <= 0) return true;
    std::sort(sum.releases.begin(), sum.releases.end(),
              [](const WindowRelease& a, const WindowRelease& b) { return a.in < b.in; });
    const std::int64_t reserve = reserve_capped(
        cls, demand_shortfall(sum.releases, sum.per_second, next_above, sum.window), sum.limit);
    return sum.left - own >= reserve;
  };
  const double per_request =
      requests_sum.per_second > 0 ? tokens_sum.per_second / requests_sum.per_second : 0;
  if (!holds(tokens_sum, cost, static_cast<std::int64_t>(std::ceil(per_request))) ||
      !holds(requests_sum, 1, 1))
    return PoolReserve::Short;
  return reports ? PoolReserve::HoldsReports : PoolReserve::Holds;
}

base::Nanos BackendStates::Quota::wait_for(const PoolMember& m, std::int64_t cost, base::MonoNanos now,
                                           const base::Clock& clock, ClassReserve cls) {
  std::lock_guard lock(quota_mutex);
  sync(m);
  base::Nanos wait{0};
  if (tokens)
    wait =
        std::max(wait, tokens->wait_for(tokens_need(cost, *tokens, cls, now, tokens_lease != nullptr), now));
  if (requests)
    wait = std::max(wait,
                    requests->wait_for(requests_need(*requests, cls, now, requests_lease != nullptr), now));
  if (tokens_lease || requests_lease) {
    const auto wall = clock.wall_now();
    // A lower class refused for what no replica holds yet (lease_may_fit): at least until the
    // others' demand over the reserve's horizon has gone by, not "now".
    const auto lease_wait = [&](const SharedLease& lease, std::int64_t own_cost, std::int64_t need) {
      base::Nanos w = lease.quota.wait_for(need, wall);
      if (need > own_cost && !lease_may_fit(lease, own_cost, need, wall)) w = std::max(w, kReserveHorizon);
      return w;
    };
    if (tokens_lease)
      wait = std::max(wait, lease_wait(*tokens_lease, cost, tokens_need(cost, *tokens_lease, cls, wall)));
    if (requests_lease)
      wait = std::max(wait, lease_wait(*requests_lease, 1, requests_need(*requests_lease, cls, wall)));
  }
  return wait;
}

void BackendStates::make_missing_leases(Quota& q, const PoolMember& m, std::string_view deployment) const {
  if (broker_ == nullptr) return;
  std::lock_guard makers(leases_mutex_);
  bool tokens_missing, requests_missing;
  {
    std::lock_guard lock(q.quota_mutex);
    tokens_missing = m.tokens_per_window > 0 && !q.tokens_lease;
    requests_missing = m.requests_per_window > 0 && !q.requests_lease;
  }
  // A lease covers about half a second of this replica's traffic (LeasedQuota::Options); it is
  // attached before anything may take from it, and without the quota's lock (LeaseBroker).
  const auto make = [&](std::int64_t limit, const char* what) {
    LeasedQuota::Options o;
    o.limit = limit;
    o.window = m.quota_window;
    o.min_lease = std::max<std::int64_t>(1, limit / kMinLeaseDivisor);
    o.bridge = true;
    auto lease = std::make_unique<SharedLease>(quota_name(m, deployment) + what, q.quota_mutex, o);
    broker_->attach(*lease);
    return lease;
  };
  std::unique_ptr<SharedLease> tokens = tokens_missing ? make(m.tokens_per_window, ":tokens") : nullptr;
  std::unique_ptr<SharedLease> requests =
      requests_missing ? make(m.requests_per_window, ":requests") : nullptr;
  std::lock_guard lock(q.quota_mutex);
  if (tokens) q.tokens_lease = std::move(tokens);
  if (requests) q.requests_lease = std::move(requests);
}

std::string BackendStates::quota_name(const PoolMember& m, std::string_view deployment) {
  // Appends, not operator+ chains: GCC 12 warns falsely (-Wrestrict) on `"/" + std::string(...)`.
  std::string name;
  if (m.quota_group.empty()) {
    name.append(m.name).append("/").append(m.effective_deployment(deployment));
    return name;
  }
  name.append("group:").append(m.quota_group);
  if (m.deployment_override.empty()) name.append("/").append(deployment);
  return name;
}

BackendStates::Leases BackendStates::leases(const PoolMember& m, std::string_view deployment) const {
  Leases out;
  Quota* q = find_quota_of(m, deployment, find_deployment(m.id, m.effective_deployment(deployment)));
  if (!q) return out;
  std::lock_guard lock(q->quota_mutex);
  if (q->tokens_lease) out.tokens = q->tokens_lease->quota.view();
  if (q->requests_lease) out.requests = q->requests_lease->quota.view();
  return out;
}

std::string BackendStates::group_key(const PoolMember& m, std::string_view deployment) {
  if (!m.deployment_override.empty()) return m.quota_group;
  std::string key = m.quota_group;
  key += '\n';
  key += deployment;
  return key;
}

BackendStates::Quota* BackendStates::find_quota_of(const PoolMember& m, std::string_view deployment,
                                                   DeploymentState* d) const {
  if (m.quota_group.empty()) return d;
  const std::string key = group_key(m, deployment);
  std::shared_lock lock(groups_mutex_);
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : it->second.get();
}

BackendStates::Quota& BackendStates::quota_of(const PoolMember& m, std::string_view deployment,
                                              DeploymentState& d) const {
  if (Quota* q = find_quota_of(m, deployment, &d)) return *q;
  std::unique_lock lock(groups_mutex_);
  if (groups_.size() >= kMaxDeploymentsPerBackend * 4 && !groups_.count(group_key(m, deployment)))
    return d;  // client-named deployments past the bound: their own budgets
  auto [it, inserted] = groups_.try_emplace(group_key(m, deployment));
  if (inserted) {
    it->second = std::make_unique<Quota>();  // its budgets: Quota::sync
    if (m.has_quota()) make_missing_leases(*it->second, m, deployment);
  }
  return *it->second;
}
bool BackendStates::reserve(const PoolMember& m, std::string_view deployment, std::int64_t cost,
                            ClassReserve cls) {
  // Each class's demand at each target, once any request of a lower class was seen (until then,
  // nothing is counted): what a lower class's reserve leaves for the classes above it.
  // A request counts where it is sent, not where its reservation failed.
  if (cls.level > 0 && !classes_in_use_.load(std::memory_order_relaxed))
    classes_in_use_.store(true, std::memory_order_relaxed);
  DeploymentState* tracked = classes_in_use_.load(std::memory_order_relaxed)
                                 ? &counted_state(m, m.effective_deployment(deployment))
                                 : nullptr;
  with_demand(tracked, cls, clock_.now());
  if (!m.has_quota()) {
    if (tracked) tracked->demand.add(cls.level, cost, clock_.now());
    return true;
  }
  Quota& q = quota_of(m, deployment, deployment_state(m, m.effective_deployment(deployment)));
  // With shared quotas the leases must admit too; what to ask the store for is sent after the
  // lock is released (the request never waits for the answer).
  PendingAsk asks[2];
  bool ok = false;
  bool leases_missing = false;
  {
    std::lock_guard lock(q.quota_mutex);
    leases_missing = q.sync(m) && broker_ != nullptr;
    const base::MonoNanos now = clock_.now();  // read under the lock: budgets only see time move forward
    // A lower class's reserve is checked, not taken: only its cost is counted.
    ok = (!q.tokens ||
          q.tokens->fits(tokens_need(cost, *q.tokens, cls, now, q.tokens_lease != nullptr), now)) &&
         (!q.requests ||
          q.requests->fits(requests_need(*q.requests, cls, now, q.requests_lease != nullptr), now));
    if (ok && cls.any()) {
      const auto wall = clock_.wall_now();
      ok = (!q.tokens_lease ||
            lease_may_fit(*q.tokens_lease, cost, tokens_need(cost, *q.tokens_lease, cls, wall), wall)) &&
           (!q.requests_lease ||
            lease_may_fit(*q.requests_lease, 1, requests_need(*q.requests_lease, cls, wall), wall));
    }
    if (ok && (q.tokens_lease || q.requests_lease)) {
      const auto wall = clock_.wall_now();
      const bool tokens_ok = !q.tokens_lease || take_leased(*q.tokens_lease, cost, wall, asks[0]);
      const bool requests_ok =
          tokens_ok && (!q.requests_lease || take_leased(*q.requests_lease, 1, wall, asks[1]));
      if (tokens_ok && !requests_ok && q.tokens_lease)
        q.tokens_lease->quota.adjust(q.tokens_lease->quota.subwindow_of(wall), -cost);
      ok = requests_ok;
    }
    if (ok) {
      if (q.tokens) q.tokens->try_consume(cost, now);
      if (q.requests) q.requests->try_consume(1, now);
    }
  }
  for (const PendingAsk& a : asks) send_pending(broker_, a);
  // A quota made (or declared by a reload) since the last request: its leases, for the next
  // requests (this one was counted locally).
  if (leases_missing) make_missing_leases(q, m, deployment);
  if (ok && tracked) tracked->demand.add(cls.level, cost, clock_.now());
  return ok;
}

void BackendStates::charge_used(const PoolMember& m, std::string_view deployment, std::int64_t tokens) {
  if (!m.has_quota() || tokens <= 0) return;
  Quota& q = quota_of(m, deployment, deployment_state(m, m.effective_deployment(deployment)));
  PendingAsk ask;
  {
    std::lock_guard lock(q.quota_mutex);
    q.sync(m);
    if (q.tokens) q.tokens->consume(tokens, clock_.now());
    if (q.tokens_lease) {
      // The replica's own count moves now; its next ask tells the store what it took beyond
      // its grant.
      const auto wall = clock_.wall_now();
      LeasedQuota& lease = q.tokens_lease->quota;
      lease.adjust(lease.subwindow_of(wall), tokens);
      q.tokens_lease->active.store(true, std::memory_order_relaxed);
      if (auto a = lease.ask(wall, 0)) ask = {q.tokens_lease.get(), *a};
    }
  }
  send_pending(broker_, ask);
}

BackendStates::QuotaUsage BackendStates::quota_usage(const PoolMember& m, std::string_view deployment) const {
  QuotaUsage u;
  u.tokens_limit = m.tokens_per_window;
  u.requests_limit = m.requests_per_window;
  Quota* q = find_quota_of(m, deployment, find_deployment(m.id, m.effective_deployment(deployment)));
  if (!q) return u;
  const base::MonoNanos now = clock_.now();
  std::lock_guard lock(q->quota_mutex);
  q->sync(m);
  if (q->tokens) u.tokens_used = q->tokens->used(now);
  if (q->requests) u.requests_used = q->requests->used(now);
  return u;
}

}  // namespace smartlb::routing
