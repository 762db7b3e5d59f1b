#include "smartlb/routing/backend_states.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace smartlb::routing {

bool BackendStates::Deadline::extend(base::MonoNanos t, FailureCause c) {
  base::MonoNanos current = until.load(std::memory_order_relaxed);
  while (t > current) {
    if (until.compare_exchange_weak(current, t, std::memory_order_relaxed)) {
      cause.store(c, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

void BackendStates::Deadline::lift() {
  until.store(0, std::memory_order_relaxed);
  cause.store(FailureCause::None, std::memory_order_relaxed);
}

CooldownView BackendStates::Deadline::view() const {
  return {until.load(std::memory_order_relaxed), cause.load(std::memory_order_relaxed)};
}

BackendStates::BackendStates(const base::Clock& clock, CooldownPolicy policy)
    : chunks_(std::make_unique<std::atomic<BackendState*>[]>(kMaxBackends / kChunk)),
      clock_(clock),
      policy_(policy) {}

BackendStates::~BackendStates() {
  for (std::size_t c = 0; c < kMaxBackends / kChunk; ++c) delete[] chunks_[c].load(std::memory_order_relaxed);
}

void BackendStates::track(const RoutingTable& table) {
  if (table.id_bound() > kMaxBackends)
    throw std::length_error("more than " + std::to_string(kMaxBackends) + " backends");
  {
    std::lock_guard lock(grow_mutex_);
    for (std::size_t c = 0; c * kChunk < table.id_bound(); ++c)
      if (chunks_[c].load(std::memory_order_relaxed) == nullptr)
        chunks_[c].store(new BackendState[kChunk], std::memory_order_release);
  }
  std::lock_guard lock(names_mutex_);
  for (const PoolMember& m : table.members()) by_name_.insert_or_assign(m.name, Named{m, true});
}

BackendStates::BackendState& BackendStates::state(BackendId id) const {
  return chunks_[id.value / kChunk].load(std::memory_order_acquire)[id.value % kChunk];
}

BackendStates::DeploymentState* BackendStates::find_deployment(BackendId id,
                                                               std::string_view deployment) const {
  const BackendState& s = state(id);
  if (DeploymentState* first = s.first_deployment.load(std::memory_order_acquire);
      first != nullptr && first->name == deployment)
    return first;
  std::shared_lock lock(s.mutex);
  auto it = s.deployments.find(deployment);
  if (it == s.deployments.end() && s.deployments.size() >= kMaxDeploymentsPerBackend)
    it = s.deployments.find(kOverflowDeployment);
  return it == s.deployments.end() ? nullptr : it->second.get();
}

BackendStates::DeploymentState& BackendStates::deployment_state(const PoolMember& m,
                                                                std::string_view deployment) const {
  DeploymentState& d = counted_state(m, deployment);
  if (!d.listed.load(std::memory_order_relaxed)) d.listed.store(true, std::memory_order_relaxed);
  return d;
}

BackendStates::DeploymentState& BackendStates::counted_state(const PoolMember& m,
                                                             std::string_view deployment) const {
  if (auto* d = find_deployment(m.id, deployment)) return *d;
  BackendState& s = state(m.id);
  std::unique_lock lock(s.mutex);
  if (s.deployments.size() >= kMaxDeploymentsPerBackend - 1 && !s.deployments.count(deployment))
    deployment = kOverflowDeployment;  // the last slot is the shared overflow entry
  auto [it, inserted] = s.deployments.try_emplace(std::string(deployment));
  if (inserted) {
    it->second = std::make_unique<DeploymentState>();  // its budgets: Quota::sync
    it->second->name = it->first;
    // Shared from its first request: the leases exist before anything is taken.
    if (m.quota_group.empty() && m.has_quota()) make_missing_leases(*it->second, m, deployment);
    if (s.first_deployment.load(std::memory_order_relaxed) == nullptr)
      s.first_deployment.store(it->second.get(), std::memory_order_release);
  }
  return *it->second;
}

BackendStates::Standing BackendStates::standing(const PoolMember& m, std::string_view deployment,
                                                base::MonoNanos now, std::int64_t cost,
                                                ClassReserve cls) const {
  const BackendState& s = state(m.id);
  if (s.backend.until.load(std::memory_order_relaxed) > now ||
      s.admin.out_until.load(std::memory_order_relaxed) > now)
    return Standing::Out;
  const Standing st = deployment_standing(m, deployment, now, cost, cls);
  if (st != Standing::Out && s.unhealthy_until.load(std::memory_order_relaxed) > now)
    return Standing::Unhealthy;
  return st;
}

BackendStates::Standing BackendStates::deployment_standing(const PoolMember& m, std::string_view deployment,
                                                           base::MonoNanos now, std::int64_t cost,
                                                           ClassReserve cls) const {
  DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
  if (d != nullptr && d->admin.out_until.load(std::memory_order_relaxed) > now) return Standing::Out;
  with_demand(d, cls, now);
  const bool fits_limit = cost <= m.tokens_per_window || m.tokens_per_window == 0;
  if (d == nullptr) {
    if (!m.has_quota()) return Standing::Available;
    Quota* group = find_quota_of(m, deployment, nullptr);  // a group others already draw on
    return (group ? group->fits(m, cost, now, clock_, cls) : fits_limit) ? Standing::Available
                                                                         : Standing::Out;
  }
  if (d->until.load(std::memory_order_relaxed) > now) {
    // The backend's own Retry-After has passed; only smartlb's floor on cooldowns holds it: a
    // target whose reports are watched may be probed at the moment the backend named.
    const bool floor_only = d->cause.load(std::memory_order_relaxed) == FailureCause::Throttled &&
                            d->reported.models_room() && d->reported.retry_passed(now);
    if (!floor_only) return Standing::Out;
  }
  if (m.has_quota()) {
    Quota* q = find_quota_of(m, deployment, d);
    if (!(q ? q->fits(m, cost, now, clock_, cls) : fits_limit)) return Standing::Out;
  }
  return d->reported.fits(cost, now, cls) ? Standing::Available : Standing::ReportedShort;
}

void BackendStates::health_failed(BackendId id, base::MonoNanos until) {
  state(id).unhealthy_until.store(until, std::memory_order_relaxed);
}

void BackendStates::health_passed(BackendId id) {
  BackendState& s = state(id);
  s.unhealthy_until.store(0, std::memory_order_relaxed);
  // A cooldown its network failures started ends: a probe just reached it.
  const base::MonoNanos now = clock_.now();
  switch (s.backend.cause.load(std::memory_order_relaxed)) {
    case FailureCause::ConnectFailed:
    case FailureCause::TlsFailed:
    case FailureCause::Timeout:
    case FailureCause::ConnectionLost:
      if (s.backend.until.load(std::memory_order_relaxed) > now)
        s.backend.until.store(now, std::memory_order_relaxed);
      break;
    default:
      break;
  }
}

bool BackendStates::unhealthy(BackendId id, base::MonoNanos now) const {
  return state(id).unhealthy_until.load(std::memory_order_relaxed) > now;
}

std::optional<base::MonoNanos> BackendStates::probe_rank(const PoolMember& m, std::string_view deployment,
                                                         base::MonoNanos now, std::int64_t cost,
                                                         ClassReserve cls) const {
  if (standing(m, deployment, now, cost, cls) != Standing::ReportedShort) return std::nullopt;
  const DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
  with_demand(d, cls, now);
  if (d == nullptr || d->reported.room(cost, now, cls) != ReportedBudget::Room::Probe ||
      d->reported.next_chance(cost, now, cls) > now)
    return std::nullopt;
  return d->reported.back_at(cost, now, cls);
}

bool BackendStates::claim_probe(const PoolMember& m, std::string_view deployment, base::MonoNanos now) {
  DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
  if (d == nullptr || !d->reported.claim_probe(now)) return false;
  if (ReportListener* l = report_listener_.load(std::memory_order_acquire))
    l->on_moment({m.name, m.effective_deployment(deployment), MomentNotice::Kind::Probe,
                  now + ReportedBudget::kFreshFor.count()});
  return true;
}

ReportedBudget::Mark BackendStates::charge_reported(const PoolMember& m, std::string_view deployment,
                                                    std::int64_t cost) {
  ReportedBudget::Mark uncounted;
  uncounted.cost = cost;
  if (!reported_budget_low()) return uncounted;
  DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
  return d ? d->reported.charge(cost) : uncounted;
}

void BackendStates::observe_report(const PoolMember& m, std::string_view deployment,
                                   const RateLimitReport& report, base::MonoNanos sent,
                                   ReportedBudget::Mark mark, bool taken) {
  if (!route_on_remaining_) return;
  const bool low = !report.empty() && ReportedBudget::is_low(report);
  const bool counted = mark.own_requests > 0;   // its deployment is watched
  const bool blind = !taken && report.empty();  // a 429 that reported nothing teaches something too
  // An answer without a report, from a backend that never sent one: remembered
  // (ReportedBudget::observe), as the first 429s of a sliding window name the moments the sends
  // before them leave it.
  std::atomic<bool>& reported = state(m.id).reported;
  if (!report.empty() && !reported.load(std::memory_order_relaxed))
    reported.store(true, std::memory_order_relaxed);
  const bool unreported = report.empty() && !reported.load(std::memory_order_relaxed);
  // Plenty left and nothing watched anywhere: the common case costs no lookup.
  if (!low && !counted && !blind && !unreported && (report.empty() || !reported_budget_low())) return;
  DeploymentState* d = low || blind ? &deployment_state(m, m.effective_deployment(deployment))
                       : unreported ? &counted_state(m, m.effective_deployment(deployment))
                                    : find_deployment(m.id, m.effective_deployment(deployment));
  if (d == nullptr) return;
  if (const int change = d->reported.observe(report, sent, mark, taken, clock_.now()))
    watched_reports_.fetch_add(change, std::memory_order_relaxed);
  if (!low) return;
  if (ReportListener* l = report_listener_.load(std::memory_order_acquire))
    l->on_report(ReportNotice{m.name, m.effective_deployment(deployment), report, sent});
}

ReportedBudget::View BackendStates::reported_budget(const PoolMember& m, std::string_view deployment) const {
  const DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
  return d ? d->reported.view() : ReportedBudget::View{};
}

std::chrono::milliseconds BackendStates::clamp_cooldown(std::optional<std::chrono::milliseconds> hint) const {
  if (!hint) return policy_.default_cooldown;
  return std::clamp(*hint, policy_.min_cooldown, policy_.max_cooldown);
}

std::chrono::milliseconds BackendStates::record_failure(const PoolMember& m, std::string_view deployment,
                                                        const Verdict& verdict,
                                                        std::optional<std::chrono::milliseconds> hint,
                                                        base::MonoNanos sent) {
  const auto cooldown = clamp_cooldown(hint);
  const base::MonoNanos now = clock_.now();
  const base::MonoNanos until = now + std::chrono::duration_cast<base::Nanos>(cooldown).count();
  if (verdict.scope == CooldownScope::Backend) {
    if (state(m.id).backend.extend(until, verdict.cause)) notify(m, {}, true, until, verdict.cause);
  } else {
    DeploymentState& d = deployment_state(m, m.effective_deployment(deployment));
    if (d.extend(until, verdict.cause))
      notify(m, m.effective_deployment(deployment), false, until, verdict.cause);
    if (verdict.cause == FailureCause::Throttled && hint) {
      const base::MonoNanos answered = sent != 0 && sent < now ? sent + (now - sent) / 2 : now;
      const base::MonoNanos at = answered + std::chrono::duration_cast<base::Nanos>(*hint).count();
      d.reported.retry_at(at);
      // The other replicas test the target then too (not where nothing is reported: there each
      // replica learns the echo of its own sends from its own 429s).
      if (ReportListener* l = report_listener_.load(std::memory_order_acquire);
          l && d.reported.watched() && !d.reported.blind())
        l->on_moment({m.name, m.effective_deployment(deployment), MomentNotice::Kind::Retry, at});
    }
  }
  return cooldown;
}

void BackendStates::hold(const PoolMember& m, std::string_view deployment, FailureCause cause,
                         base::Nanos duration) {
  const base::MonoNanos until = clock_.now() + duration.count();
  if (deployment_state(m, m.effective_deployment(deployment)).extend(until, cause))
    notify(m, m.effective_deployment(deployment), false, until, cause);
}

void BackendStates::notify(const PoolMember& m, std::string_view deployment, bool whole_backend,
                           base::MonoNanos until, FailureCause cause) const {
  if (CooldownListener* l = listener_.load(std::memory_order_acquire))
    l->on_cooldown(CooldownNotice{m.name, deployment, whole_backend, until, cause});
}

bool BackendStates::hold_by_name(std::string_view backend, std::string_view deployment, FailureCause cause,
                                 base::Nanos duration) {
  const base::MonoNanos until = clock_.now() + duration.count();
  PoolMember m;
  {
    std::lock_guard lock(names_mutex_);
    auto it = by_name_.find(backend);
    if (it == by_name_.end()) return false;
    m = it->second.member;
  }
  if (deployment_state(m, deployment).extend(until, cause)) notify(m, deployment, false, until, cause);
  return true;
}

std::int64_t BackendStates::to_epoch_ms(base::MonoNanos until) const {
  const auto wall = std::chrono::duration_cast<base::Millis>(clock_.wall_now().time_since_epoch()).count();
  return wall + (until - clock_.now()) / 1'000'000;
}

bool BackendStates::apply_remote_cooldown(std::string_view backend, std::string_view deployment,
                                          bool whole_backend, std::int64_t until_epoch_ms,
                                          FailureCause cause) {
  const auto wall = std::chrono::duration_cast<base::Millis>(clock_.wall_now().time_since_epoch()).count();
  if (until_epoch_ms <= wall) return false;  // already over
  // Whatever another replica (or anyone with access to Redis) wrote: at most a week away, so
  // the nanoseconds cannot overflow (no local cooldown is that long either).
  constexpr std::int64_t kMaxRemoteMs = 7LL * 24 * 3600 * 1000;
  const base::MonoNanos until = clock_.now() + std::min(until_epoch_ms - wall, kMaxRemoteMs) * 1'000'000;
  std::lock_guard lock(names_mutex_);
  auto it = by_name_.find(backend);
  if (it == by_name_.end()) return false;
  const PoolMember& m = it->second.member;
  if (whole_backend) return state(m.id).backend.extend(until, cause);
  // `deployment` is already a state key (what the publisher's effective_deployment gave).
  return deployment_state(m, deployment).extend(until, cause);
}

base::MonoNanos BackendStates::recovery_at(const PoolMember& m, std::string_view deployment,
                                           FailureCause* cause) const {
  CooldownView b = state(m.id).backend.view();
  CooldownView d{};
  if (const DeploymentState* dd = find_deployment(m.id, m.effective_deployment(deployment))) d = dd->view();
  const CooldownView& later = d.until > b.until ? d : b;
  if (cause) *cause = later.cause;
  return later.until;
}

Unavailability BackendStates::unavailability(const RoutingTable& table, std::string_view deployment,
                                             std::int64_t cost, ClassReserve cls) const {
  const base::MonoNanos now = clock_.now();
  base::MonoNanos soonest = std::numeric_limits<base::MonoNanos>::max();
  bool throttled = false;
  bool soonest_predicted = false;
  // 404 when each backend in service said the deployment is not there: one drained by an
  // operator changes nothing (a typo must get the same answer whatever is drained).
  bool not_found = table.size() > 0;
  bool said_not_found = false;
  bool out_of_service = table.size() > 0;
  for (const PoolMember& m : table.members()) {
    DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
    with_demand(d, cls, now);
    const base::MonoNanos admin = admin_out(m, d);
    if (admin == kAdminForever) continue;  // no moment to announce: the others' recoveries decide
    out_of_service = false;
    FailureCause cause = FailureCause::None;
    base::MonoNanos at = recovery_at(m, deployment, &cause);
    if (is_rate_limit(cause) && at > now) throttled = true;
    if (cause != FailureCause::NotFound || at <= now) not_found = false;
    said_not_found = true;  // (meaningful only while not_found holds)
    if (admin > now) {      // a cooldown held by hand: back when it ends, for no other reason
      at = std::max(at, admin);
      not_found = false;
    }
    const bool cooling = at > now;  // a backend's own refusal, or an operator's hold
    bool predicted = false;
    if (d != nullptr) {
      const base::MonoNanos from = std::max(now, at);
      if (const base::MonoNanos chance = d->reported.next_chance(cost, from, cls); chance > from) {
        at = chance;
        throttled = true;  // out of what it reported: a rate limit, though it never said 429
        predicted = !cooling;
      }
      Quota* q = m.has_quota() ? find_quota_of(m, deployment, d) : nullptr;
      if (q) {
        const base::Nanos wait = q->wait_for(m, cost, std::max(now, at), clock_, cls);
        if (wait.count() > 0) {
          at = std::max(now, at) + wait.count();
          throttled = true;  // at its quota: a rate limit, whoever noticed it first
          predicted = !cooling;
        }
      }
    }
    if (at < soonest) {
      soonest = at;
      soonest_predicted = predicted;
    }
  }
  // A lower class its pool refuses (pool_reserve) where a member alone might take it: no one
  // window says when the pool keeps the reserve again; it is looked at after kReserveHorizon.
  if (soonest != std::numeric_limits<base::MonoNanos>::max() && cls.any() &&
      pool_reserve(table, deployment, cost, cls) == PoolReserve::Short) {
    if (const base::MonoNanos reserve_back = now + kReserveHorizon.count(); reserve_back > soonest) {
      soonest = reserve_back;
      soonest_predicted = true;  // the reserve, smartlb's own
    }
    throttled = true;
  }
  Unavailability u;
  u.throttled = throttled;
  u.predicted = throttled && soonest_predicted;
  u.not_found = not_found && said_not_found && !throttled;
  u.out_of_service = out_of_service;
  if (table.size() == 0 || soonest <= now || out_of_service) {
    u.retry_after = std::chrono::milliseconds(0);
  } else {
    u.retry_after = std::chrono::ceil<std::chrono::milliseconds>(base::Nanos(soonest - now));
  }
  return u;
}

CooldownView BackendStates::backend_cooldown(BackendId id) const { return state(id).backend.view(); }

CooldownView BackendStates::deployment_cooldown(const PoolMember& m, std::string_view deployment) const {
  const DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment));
  return d ? d->view() : CooldownView{};
}

std::vector<std::pair<std::string, CooldownView>> BackendStates::deployment_cooldowns(BackendId id) const {
  std::vector<std::pair<std::string, CooldownView>> out;
  const BackendState& s = state(id);
  std::shared_lock lock(s.mutex);
  out.reserve(s.deployments.size());
  for (const auto& [name, d] : s.deployments)
    if (d->listed.load(std::memory_order_relaxed)) out.emplace_back(name, d->view());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace smartlb::routing
