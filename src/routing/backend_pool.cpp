#include "smartlb/routing/backend_pool.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

namespace smartlb {

void TriedSet::add(std::size_t i) {
  if (contains(i)) return;
  if (i < 64) {
    bits_ |= (std::uint64_t{1} << i);
  } else {
    if (more_.size() <= i - 64) more_.resize(i - 64 + 1, false);
    more_[i - 64] = true;
  }
  ++count_;
}

bool TriedSet::contains(std::size_t i) const {
  if (i < 64) return (bits_ >> i) & 1u;
  return i - 64 < more_.size() && more_[i - 64];
}

void BackendPool::Deadline::extend(MonoNanos t, FailureCause c) {
  MonoNanos current = until.load(std::memory_order_relaxed);
  while (t > current) {
    if (until.compare_exchange_weak(current, t, std::memory_order_relaxed)) {
      cause.store(c, std::memory_order_relaxed);
      return;
    }
  }
}

CooldownView BackendPool::Deadline::view() const {
  return {until.load(std::memory_order_relaxed), cause.load(std::memory_order_relaxed)};
}

bool BackendPool::DeploymentState::fits(std::int64_t cost, MonoNanos now) {
  std::lock_guard lock(quota_mutex);
  return (!tokens || tokens->fits(cost, now)) && (!requests || requests->fits(1, now));
}

Nanos BackendPool::DeploymentState::wait_for(std::int64_t cost, MonoNanos now) {
  std::lock_guard lock(quota_mutex);
  Nanos wait{0};
  if (tokens) wait = std::max(wait, tokens->wait_for(cost, now));
  if (requests) wait = std::max(wait, requests->wait_for(1, now));
  return wait;
}

BackendPool::BackendPool(std::vector<PoolMember> members, const Clock& clock,
                         CooldownPolicy policy)
    : members_(std::move(members)),
      state_(std::make_unique<BackendState[]>(members_.size())),
      clock_(clock),
      policy_(policy) {
  std::vector<std::size_t> order(members_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return members_[a].priority < members_[b].priority;
  });
  for (std::size_t i : order) {
    if (groups_.empty() || groups_.back().priority != members_[i].priority)
      groups_.push_back({members_[i].priority, {}});
    groups_.back().members.push_back(i);
    any_quota_ = any_quota_ || members_[i].has_quota();
  }
}

BackendPool::~BackendPool() = default;

std::string_view BackendPool::effective_deployment(std::size_t i,
                                                   std::string_view requested) const {
  const auto& fixed = members_[i].deployment_override;
  return fixed.empty() ? requested : std::string_view(fixed);
}

BackendPool::DeploymentState* BackendPool::find_deployment(std::size_t i,
                                                           std::string_view deployment) const {
  const BackendState& s = state_[i];
  std::shared_lock lock(s.mutex);
  auto it = s.deployments.find(deployment);
  if (it == s.deployments.end() && s.deployments.size() >= kMaxDeploymentsPerBackend)
    it = s.deployments.find(kOverflowDeployment);
  return it == s.deployments.end() ? nullptr : it->second.get();
}

BackendPool::DeploymentState& BackendPool::deployment_state(std::size_t i,
                                                            std::string_view deployment) const {
  if (auto* d = find_deployment(i, deployment)) return *d;
  BackendState& s = state_[i];
  std::unique_lock lock(s.mutex);
  if (s.deployments.size() >= kMaxDeploymentsPerBackend - 1 && !s.deployments.count(deployment))
    deployment = kOverflowDeployment;  // the last slot is the shared overflow entry
  auto [it, inserted] = s.deployments.try_emplace(std::string(deployment));
  if (inserted) {
    it->second = std::make_unique<DeploymentState>();
    const PoolMember& m = members_[i];
    if (m.tokens_per_window > 0) it->second->tokens.emplace(m.tokens_per_window, m.quota_window);
    if (m.requests_per_window > 0) it->second->requests.emplace(m.requests_per_window, m.quota_window);
  }
  return *it->second;
}

bool BackendPool::available_at(std::size_t i, std::string_view deployment, MonoNanos now,
                               std::int64_t cost) const {
  if (state_[i].backend.until.load(std::memory_order_relaxed) > now) return false;
  DeploymentState* d = find_deployment(i, effective_deployment(i, deployment));
  if (d == nullptr) return !members_[i].has_quota() || cost <= members_[i].tokens_per_window ||
                           members_[i].tokens_per_window == 0;
  if (d->until.load(std::memory_order_relaxed) > now) return false;
  return !members_[i].has_quota() || d->fits(cost, now);
}

bool BackendPool::available(std::size_t i, std::string_view deployment) const {
  return available_at(i, deployment, clock_.now());
}

std::optional<std::size_t> BackendPool::pick(std::string_view deployment, const TriedSet& tried,
                                             RandomSource& rng, std::int64_t cost) const {
  const MonoNanos now = clock_.now();
  // Candidates of one group, checked once each; inline storage covers ordinary pools.
  constexpr std::size_t kInline = 64;
  std::size_t inline_ids[kInline];
  std::vector<std::size_t> spill;
  for (const Group& g : groups_) {
    std::size_t* ids = inline_ids;
    if (g.members.size() > kInline) {
      spill.resize(g.members.size());
      ids = spill.data();
    }
    std::size_t n = 0;
    std::uint64_t total = 0;
    for (std::size_t i : g.members) {
      if (tried.contains(i) || !available_at(i, deployment, now, cost)) continue;
      ids[n++] = i;
      total += members_[i].weight;
    }
    if (n == 0) continue;
    std::uint64_t draw = rng.below(total);
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t w = members_[ids[k]].weight;
      if (draw < w) return ids[k];
      draw -= w;
    }
    return ids[n - 1];
  }
  return std::nullopt;
}

bool BackendPool::reserve(std::size_t i, std::string_view deployment, std::int64_t cost) {
  if (!members_[i].has_quota()) return true;
  DeploymentState& d = deployment_state(i, effective_deployment(i, deployment));
  std::lock_guard lock(d.quota_mutex);
  const MonoNanos now = clock_.now();  // read under the lock: budgets only see time move forward
  if ((d.tokens && !d.tokens->fits(cost, now)) || (d.requests && !d.requests->fits(1, now))) return false;
  if (d.tokens) d.tokens->try_consume(cost, now);
  if (d.requests) d.requests->try_consume(1, now);
  return true;
}

BackendPool::QuotaUsage BackendPool::quota_usage(std::size_t i, std::string_view deployment) const {
  QuotaUsage u;
  u.tokens_limit = members_[i].tokens_per_window;
  u.requests_limit = members_[i].requests_per_window;
  DeploymentState* d = find_deployment(i, effective_deployment(i, deployment));
  if (!d) return u;
  const MonoNanos now = clock_.now();
  std::lock_guard lock(d->quota_mutex);
  if (d->tokens) u.tokens_used = d->tokens->used(now);
  if (d->requests) u.requests_used = d->requests->used(now);
  return u;
}

std::chrono::milliseconds BackendPool::clamp_cooldown(
    std::optional<std::chrono::milliseconds> hint) const {
  if (!hint) return policy_.default_cooldown;
  return std::clamp(*hint, policy_.min_cooldown, policy_.max_cooldown);
}

std::chrono::milliseconds BackendPool::record_failure(std::size_t i, std::string_view deployment,
                                                      const Verdict& verdict,
                                                      std::optional<std::chrono::milliseconds> hint) {
  const auto cooldown = clamp_cooldown(hint);
  const MonoNanos until =
      clock_.now() + std::chrono::duration_cast<Nanos>(cooldown).count();
  if (verdict.scope == CooldownScope::Backend) {
    state_[i].backend.extend(until, verdict.cause);
  } else {
    deployment_state(i, effective_deployment(i, deployment)).extend(until, verdict.cause);
  }
  return cooldown;
}

MonoNanos BackendPool::recovery_at(std::size_t i, std::string_view deployment,
                                   FailureCause* cause) const {
  CooldownView b = state_[i].backend.view();
  CooldownView d{};
  if (const DeploymentState* dd = find_deployment(i, effective_deployment(i, deployment))) d = dd->view();
  const CooldownView& later = d.until > b.until ? d : b;
  if (cause) *cause = later.cause;
  return later.until;
}

Unavailability BackendPool::unavailability(std::string_view deployment, std::int64_t cost) const {
  const MonoNanos now = clock_.now();
  MonoNanos soonest = std::numeric_limits<MonoNanos>::max();
  bool throttled = false;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    FailureCause cause = FailureCause::None;
    MonoNanos at = recovery_at(i, deployment, &cause);
    if (cause == FailureCause::Throttled && at > now) throttled = true;
    if (members_[i].has_quota()) {
      if (DeploymentState* d = find_deployment(i, effective_deployment(i, deployment))) {
        const Nanos wait = d->wait_for(cost, std::max(now, at));
        if (wait.count() > 0) {
          at = std::max(now, at) + wait.count();
          throttled = true;  // at its quota: a rate limit, whoever noticed it first
        }
      }
    }
    if (at < soonest) soonest = at;
  }
  Unavailability u;
  u.throttled = throttled;
  if (members_.empty() || soonest <= now) {
    u.retry_after = std::chrono::milliseconds(0);
  } else {
    u.retry_after = std::chrono::ceil<std::chrono::milliseconds>(Nanos(soonest - now));
  }
  return u;
}

CooldownView BackendPool::backend_cooldown(std::size_t i) const { return state_[i].backend.view(); }

CooldownView BackendPool::deployment_cooldown(std::size_t i, std::string_view deployment) const {
  const DeploymentState* d = find_deployment(i, effective_deployment(i, deployment));
  return d ? d->view() : CooldownView{};
}

std::vector<std::pair<std::string, CooldownView>> BackendPool::deployment_cooldowns(
    std::size_t i) const {
  std::vector<std::pair<std::string, CooldownView>> out;
  const BackendState& s = state_[i];
  std::shared_lock lock(s.mutex);
  out.reserve(s.deployments.size());
  for (const auto& [name, d] : s.deployments) out.emplace_back(name, d->view());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace smartlb
