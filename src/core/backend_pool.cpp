#include "smartlb/backend_pool.hpp"

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
  }
}

BackendPool::~BackendPool() = default;

std::string_view BackendPool::effective_deployment(std::size_t i,
                                                   std::string_view requested) const {
  const auto& fixed = members_[i].deployment_override;
  return fixed.empty() ? requested : std::string_view(fixed);
}

const BackendPool::Deadline* BackendPool::find_deployment(std::size_t i,
                                                          std::string_view deployment) const {
  const BackendState& s = state_[i];
  std::shared_lock lock(s.mutex);
  auto it = s.deployments.find(deployment);
  return it == s.deployments.end() ? nullptr : it->second.get();
}

BackendPool::Deadline& BackendPool::deployment_deadline(std::size_t i,
                                                        std::string_view deployment) {
  if (auto* d = find_deployment(i, deployment)) return const_cast<Deadline&>(*d);
  BackendState& s = state_[i];
  std::unique_lock lock(s.mutex);
  auto [it, inserted] = s.deployments.try_emplace(std::string(deployment));
  if (inserted) it->second = std::make_unique<Deadline>();
  return *it->second;
}

bool BackendPool::available_at(std::size_t i, std::string_view deployment, MonoNanos now) const {
  if (state_[i].backend.until.load(std::memory_order_relaxed) > now) return false;
  const Deadline* d = find_deployment(i, effective_deployment(i, deployment));
  return d == nullptr || d->until.load(std::memory_order_relaxed) <= now;
}

bool BackendPool::available(std::size_t i, std::string_view deployment) const {
  return available_at(i, deployment, clock_.now());
}

std::optional<std::size_t> BackendPool::pick(std::string_view deployment, const TriedSet& tried,
                                             RandomSource& rng) const {
  const MonoNanos now = clock_.now();
  for (const Group& g : groups_) {
    // Two passes instead of a temporary list: sum the weights of the candidates, then walk
    // to the drawn one. Availability is re-read on the second pass; a backend that cooled in
    // between is still a fine pick (it just answers 429 and we move on).
    std::uint64_t total = 0;
    for (std::size_t i : g.members)
      if (!tried.contains(i) && available_at(i, deployment, now)) total += members_[i].weight;
    if (total == 0) continue;
    std::uint64_t draw = rng.below(total);
    std::size_t last = g.members.front();
    for (std::size_t i : g.members) {
      if (tried.contains(i) || !available_at(i, deployment, now)) continue;
      last = i;
      if (draw < members_[i].weight) return i;
      draw -= members_[i].weight;
    }
    return last;
  }
  return std::nullopt;
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
    deployment_deadline(i, effective_deployment(i, deployment)).extend(until, verdict.cause);
  }
  return cooldown;
}

MonoNanos BackendPool::recovery_at(std::size_t i, std::string_view deployment,
                                   FailureCause* cause) const {
  CooldownView b = state_[i].backend.view();
  CooldownView d{};
  if (const Deadline* dd = find_deployment(i, effective_deployment(i, deployment))) d = dd->view();
  const CooldownView& later = d.until > b.until ? d : b;
  if (cause) *cause = later.cause;
  return later.until;
}

Unavailability BackendPool::unavailability(std::string_view deployment) const {
  const MonoNanos now = clock_.now();
  MonoNanos soonest = std::numeric_limits<MonoNanos>::max();
  bool throttled = false;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    FailureCause cause = FailureCause::None;
    const MonoNanos at = recovery_at(i, deployment, &cause);
    if (at < soonest) soonest = at;
    if (cause == FailureCause::Throttled && at > now) throttled = true;
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
  const Deadline* d = find_deployment(i, effective_deployment(i, deployment));
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
