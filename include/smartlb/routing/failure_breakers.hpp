#pragma once
// model_configs[].failure_tolerance: a target that fails over more than its allowed number of
// times in a rolling minute is taken out for its cooldown period (a breaker), beside the
// per-response cooldowns. This counts the failures; the caller applies the trip
// (BackendStates::hold). Thread-safe; the counts of a target survive a reload.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/sliding_window_budget.hpp"

namespace smartlb::routing {

// Replicas counting a target's failures together (redis::SharedFailures, docs/scale-out.md):
// told of each failure the local count did not trip on; when all replicas' failures in the last
// minute are more than allowed, it trips the breaker (BackendStates::hold_by_name, which every
// replica then learns as a shared cooldown).
class FailureSharer {
 public:
  struct Failure {
    std::string backend;     // the backend's configured name
    std::string deployment;  // the state's deployment key (the target's effective deployment)
    std::string target;      // for the log
    std::uint32_t allowed = 0;
    base::Nanos cooldown{0};
  };
  virtual ~FailureSharer() = default;
  // Returns at once; called on a worker thread.
  virtual void count(Failure f) = 0;
};

class FailureBreakers {
 public:
  static constexpr base::Nanos kWindow{std::chrono::minutes(1)};
  // Targets come from clients' model names when a target passes them through: past this many,
  // failures of new ones are not counted (their per-response cooldowns still apply).
  static constexpr std::size_t kMaxTargets = 4096;

  // Counts one failover outcome of the target (`backend`, `deployment`) at `now`. True when it
  // is one more than `allowed` in the last minute: the breaker trips, and counting starts anew.
  bool record(BackendId backend, std::string_view deployment, std::uint32_t allowed, base::MonoNanos now);

  // Shared by replicas (REDIS_URL): set before the first request; it must outlive this object's use.
  void set_sharer(FailureSharer* sharer) { sharer_.store(sharer, std::memory_order_release); }
  FailureSharer* sharer() const { return sharer_.load(std::memory_order_acquire); }

 private:
  std::atomic<FailureSharer*> sharer_{nullptr};
  std::mutex mutex_;  // failures are rare next to requests: one lock is enough
  std::unordered_map<std::string, std::unique_ptr<SlidingWindowBudget>> counts_;
};

}  // namespace smartlb::routing
