#include "smartlb/routing/failure_breakers.hpp"

namespace smartlb::routing {

bool FailureBreakers::record(BackendId backend, std::string_view deployment, std::uint32_t allowed,
                             base::MonoNanos now) {
  if (allowed == 0) return true;  // no failure tolerated
  std::string key = std::to_string(backend.value);
  key += '\n';
  key += deployment;
  std::lock_guard lock(mutex_);
  auto it = counts_.find(key);
  if (it == counts_.end()) {
    if (counts_.size() >= kMaxTargets) return false;
    it = counts_.emplace(std::move(key), std::make_unique<SlidingWindowBudget>(allowed, kWindow, 60)).first;
  } else if (it->second->limit() != allowed) {
    // The allowance changed with a reload: count afresh under the new one.
    it->second = std::make_unique<SlidingWindowBudget>(allowed, kWindow, 60);
  }
  if (it->second->try_consume(1, now)) return false;
  it->second = std::make_unique<SlidingWindowBudget>(allowed, kWindow, 60);
  return true;
}

}  // namespace smartlb::routing
