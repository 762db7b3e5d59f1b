#include "smartlb/redis/heard_demand.hpp"

#include <algorithm>

namespace smartlb::redis {

std::optional<HeardDemand::Sum> HeardDemand::hear(const std::string& target, const std::string& replica,
                                                  const routing::ClassDemand::Rates& rates,
                                                  base::MonoNanos now) {
  if (targets_.size() >= kMaxTargets && !targets_.count(target))
    targets_.clear();  // client-named deployments
  auto& replicas = targets_[target];
  // Those that stopped sending here first: a replica that went quiet (or died) drops out.
  std::erase_if(replicas, [&](const auto& r) { return now - r.second.at >= ttl_.count(); });
  auto it = replicas.find(replica);
  if (it == replicas.end()) {
    if (replicas.size() >= kMaxReplicas) return std::nullopt;
    it = replicas.emplace(replica, Heard{}).first;
  }
  it->second = Heard{rates, now};
  Sum sum;
  base::MonoNanos oldest = now;
  for (const auto& [name, heard] : replicas) {
    oldest = std::min(oldest, heard.at);
    for (std::size_t i = 0; i < sum.rates.size(); ++i) {
      sum.rates[i].tokens_per_second += heard.rates[i].tokens_per_second;
      sum.rates[i].requests_per_second += heard.rates[i].requests_per_second;
    }
  }
  // Until the oldest rate in the sum is stale: the next message (every 250 ms) renews it, and a
  // replica that stops sending counts for at most the ttl after its last message.
  sum.until = oldest + ttl_.count();
  return sum;
}

}  // namespace smartlb::redis
