#include "smartlb/clients/capacity_wait.hpp"

#include <algorithm>

namespace smartlb::clients {

std::optional<base::Nanos> capacity_wait(const CapacityWaitPolicy& policy, const CapacityWaitAsk& ask) {
  // The grace: once (a request refused again after it is answered), and only for a prediction's
  // refusal that says when its room comes back.
  const bool graced = ask.predicted && ask.retry_after && ask.waited <= base::Nanos{0};
  const base::Nanos bound = graced ? std::max(policy.max_wait, policy.grace) : policy.max_wait;
  if (bound <= base::Nanos{0}) return std::nullopt;
  const base::Nanos left = std::min(bound - ask.waited, ask.request_left);
  if (left <= base::Nanos{0}) return std::nullopt;
  if (!ask.retry_after) return std::min(kCapacityPollStep, left);
  if (*ask.retry_after > left) return std::nullopt;
  return std::max(*ask.retry_after, kCapacityMinWait);
}

}  // namespace smartlb::clients
