// Priority classes' demand shared by replicas (routing/class_reserve.hpp, redis::SharedClassDemand).
#include <algorithm>

#include "smartlb/routing/backend_states.hpp"

namespace smartlb::routing {

std::vector<BackendStates::TargetDemand> BackendStates::class_demand(double min_requests_per_second) const {
  std::vector<TargetDemand> out;
  if (!classes_in_use_.load(std::memory_order_relaxed)) return out;
  std::vector<std::pair<std::string, BackendId>> backends;
  {
    std::lock_guard lock(names_mutex_);
    for (const auto& [name, named] : by_name_)
      if (named.current) backends.emplace_back(name, named.member.id);
  }
  const base::MonoNanos now = clock_.now();
  for (const auto& [name, id] : backends) {
    const BackendState& s = state(id);
    std::shared_lock lock(s.mutex);
    for (const auto& [deployment, d] : s.deployments) {
      const ClassDemand::Rates rates = d->demand.local(now);
      if (std::any_of(rates.begin(), rates.end(), [&](const ClassDemand::Rate& r) {
            return r.requests_per_second >= min_requests_per_second;
          }))
        out.push_back({name, deployment, rates});
    }
  }
  return out;
}

void BackendStates::count_refused(const RoutingTable& table, std::string_view deployment, std::int64_t cost,
                                  std::size_t level) {
  if (!classes_in_use_.load(std::memory_order_relaxed) || table.groups().empty()) return;
  const PriorityGroup& best = table.groups().front();
  double weights = 0;
  for (const std::size_t i : best.members) weights += table.member(i).weight;
  if (weights <= 0) return;
  const base::MonoNanos now = clock_.now();
  for (const std::size_t i : best.members) {
    const PoolMember& m = table.member(i);
    counted_state(m, m.effective_deployment(deployment)).demand.add(level, cost, now, m.weight / weights);
  }
}

bool BackendStates::apply_shared_demand(std::string_view backend, std::string_view deployment,
                                        const ClassDemand::Rates& rates, base::Nanos ttl) {
  PoolMember m;
  if (!current_member(backend, m)) return false;
  // Another replica sends a lower class: this one counts its own demand from now on, which is
  // what that replica's lower class must leave room for.
  if (std::any_of(rates.begin() + 1, rates.end(),
                  [](const ClassDemand::Rate& r) { return r.requests_per_second > 0; }) &&
      !classes_in_use_.load(std::memory_order_relaxed))
    classes_in_use_.store(true, std::memory_order_relaxed);
  counted_state(m, deployment).demand.set_remote(rates, clock_.now() + ttl.count());  // already a state key
  return true;
}

}  // namespace smartlb::routing
