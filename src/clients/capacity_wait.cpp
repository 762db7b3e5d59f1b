#include "smartlb/clients/capacity_wait.hpp"

#include <algorithm>

namespace smartlb::clients {

std::optional<base::Nanos> capacity_wait(const CapacityWaitPolicy& policy, const CapacityWaitAsk& ask) {
  if (policy.max_wait <= base::Nanos{0}) return std::nullopt;
  const base::Nanos left = std::min(policy.max_wait - ask.waited, ask.request_left);
  if (left <= base::Nanos{0}) return std::nullopt;
  if (!ask.retry_after) return std::min(kCapacityPollStep, left);
  if (*ask.retry_after > left) return std::nullopt;
  return std::max(*ask.retry_after, kCapacityMinWait);
}

}  // namespace smartlb::clients
