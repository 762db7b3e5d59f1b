#pragma once
// Runtime state of the backends and the pick: priority groups, weighted random inside the
// best group, cooldowns per backend and per (backend, deployment). Thread-safe without a
// global lock: deadlines are atomics, and each backend guards only its own deployment map.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/base/random.hpp"
#include "smartlb/routing/sliding_window_budget.hpp"

namespace smartlb {

struct PoolMember {
  std::string name;
  int priority = 1;
  std::uint32_t weight = 1;
  std::string deployment_override;  // the deployment this backend really serves, if fixed
  // Declared quota per deployment over `quota_window` (0: none declared). With a quota the
  // pool routes ahead of the backend's 429 instead of discovering it.
  std::int64_t tokens_per_window = 0;
  std::int64_t requests_per_window = 0;
  Nanos quota_window{std::chrono::seconds(60)};
  bool has_quota() const { return tokens_per_window > 0 || requests_per_window > 0; }
};

struct CooldownPolicy {
  std::chrono::milliseconds default_cooldown{10'000};
  std::chrono::milliseconds min_cooldown{100};
  std::chrono::milliseconds max_cooldown{300'000};
};

// The backends one request has already tried. Inline bits for the first 64 backends.
class TriedSet {
 public:
  void add(std::size_t i);
  bool contains(std::size_t i) const;
  std::size_t count() const { return count_; }

 private:
  std::uint64_t bits_ = 0;
  std::vector<bool> more_;
  std::size_t count_ = 0;
};

// Why nothing could be picked, and when the soonest backend comes back.
struct Unavailability {
  std::chrono::milliseconds retry_after{0};
  bool throttled = false;  // some backend is cooling for a 429 or at its quota (answer 429)
};

struct CooldownView {
  MonoNanos until = 0;  // 0 or past: available
  FailureCause cause = FailureCause::None;
};

class BackendPool {
 public:
  BackendPool(std::vector<PoolMember> members, const Clock& clock, CooldownPolicy policy);
  ~BackendPool();
  BackendPool(const BackendPool&) = delete;
  BackendPool& operator=(const BackendPool&) = delete;

  // Deployment names come from clients: past this many per backend, new names share one
  // overflow entry (so their cooldowns and quota still apply) instead of growing memory.
  static constexpr std::size_t kMaxDeploymentsPerBackend = 1024;
  static constexpr std::string_view kOverflowDeployment = "(other)";

  std::size_t size() const { return members_.size(); }
  const PoolMember& member(std::size_t i) const { return members_[i]; }

  // The deployment key backend `i` serves for a client asking for `requested`.
  std::string_view effective_deployment(std::size_t i, std::string_view requested) const;

  // Picks an available backend not in `tried` from the best priority group that has one,
  // weighted by `weight`. A backend with a declared quota is available only while `cost`
  // tokens (and one request) fit in it. nullopt when none is left.
  std::optional<std::size_t> pick(std::string_view deployment, const TriedSet& tried,
                                  RandomSource& rng, std::int64_t cost = 0) const;

  // Counts a request of `cost` tokens against backend `i`'s quota for `deployment`. False
  // when it no longer fits (another thread took the room since the pick). Always true for
  // a backend without a declared quota.
  bool reserve(std::size_t i, std::string_view deployment, std::int64_t cost);
  bool any_quota() const { return any_quota_; }

  // Applies a failover verdict: cool down for the clamped hint, or the default. Deadlines
  // only grow. Returns the cooldown applied.
  std::chrono::milliseconds record_failure(std::size_t i, std::string_view deployment,
                                           const Verdict& verdict,
                                           std::optional<std::chrono::milliseconds> hint);

  bool available(std::size_t i, std::string_view deployment) const;
  // When every backend is out for `deployment`: the soonest recovery (a cooldown's end, or
  // the time until `cost` fits in a quota).
  Unavailability unavailability(std::string_view deployment, std::int64_t cost = 0) const;

  struct QuotaUsage {
    std::int64_t tokens_used = 0, tokens_limit = 0, requests_used = 0, requests_limit = 0;
  };
  QuotaUsage quota_usage(std::size_t i, std::string_view deployment) const;

  CooldownView backend_cooldown(std::size_t i) const;
  CooldownView deployment_cooldown(std::size_t i, std::string_view deployment) const;
  // Every deployment with state on backend `i`, with its cooldown (for status pages).
  std::vector<std::pair<std::string, CooldownView>> deployment_cooldowns(std::size_t i) const;

  std::chrono::milliseconds clamp_cooldown(std::optional<std::chrono::milliseconds> hint) const;
  const Clock& clock() const { return clock_; }

 private:
  struct Deadline {
    std::atomic<MonoNanos> until{0};
    std::atomic<FailureCause> cause{FailureCause::None};
    void extend(MonoNanos t, FailureCause c);
    CooldownView view() const;
  };
  // A (backend, deployment): its cooldown and, when declared, its quota budgets.
  struct DeploymentState : Deadline {
    std::mutex quota_mutex;  // per (backend, deployment): never shared across backends
    std::optional<SlidingWindowBudget> tokens, requests;
    bool fits(std::int64_t cost, MonoNanos now);
    Nanos wait_for(std::int64_t cost, MonoNanos now);
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct BackendState {
    Deadline backend;
    mutable std::shared_mutex mutex;  // guards the map's shape only; entries are atomics
    std::unordered_map<std::string, std::unique_ptr<DeploymentState>, StringHash, std::equal_to<>>
        deployments;
  };
  struct Group {
    int priority;
    std::vector<std::size_t> members;
  };

  DeploymentState* find_deployment(std::size_t i, std::string_view deployment) const;
  DeploymentState& deployment_state(std::size_t i, std::string_view deployment) const;
  bool available_at(std::size_t i, std::string_view deployment, MonoNanos now,
                    std::int64_t cost = 0) const;
  MonoNanos recovery_at(std::size_t i, std::string_view deployment, FailureCause* cause) const;

  std::vector<PoolMember> members_;
  std::vector<Group> groups_;  // by ascending priority
  std::unique_ptr<BackendState[]> state_;
  const Clock& clock_;
  CooldownPolicy policy_;
  bool any_quota_ = false;
};

}  // namespace smartlb
