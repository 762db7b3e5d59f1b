#pragma once
// model_configs[].failure_tolerance: a target that fails over more than its allowed number of
// times in a rolling minute is taken out for its cooldown period (a breaker), beside the
// per-response cooldowns. This counts the failures; the caller applies the trip
// (BackendStates::hold). Thread-safe; the counts of a target survive a reload.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/sliding_window_budget.hpp"

namespace smartlb {

class FailureBreakers {
 public:
  static constexpr Nanos kWindow{std::chrono::minutes(1)};
  // Targets come from clients' model names when a target passes them through: past this many,
  // failures of new ones are not counted (their per-response cooldowns still apply).
  static constexpr std::size_t kMaxTargets = 4096;

  // Counts one failover outcome of the target (`backend`, `deployment`) at `now`. True when it
  // is one more than `allowed` in the last minute: the breaker trips, and counting starts anew.
  bool record(BackendId backend, std::string_view deployment, std::uint32_t allowed, MonoNanos now);

 private:
  std::mutex mutex_;  // failures are rare next to requests: one lock is enough
  std::unordered_map<std::string, std::unique_ptr<SlidingWindowBudget>> counts_;
};

}  // namespace smartlb
