#include "smartlb/routing/routing_table.hpp"

#include <algorithm>

namespace smartlb::routing {

RoutingTable::RoutingTable(std::vector<PoolMember> members, BackendIds& ids) : members_(std::move(members)) {
  for (auto& m : members_) m.id = ids.id_for(m.name);
  index();
}

RoutingTable::RoutingTable(std::vector<PoolMember> members) : members_(std::move(members)) {
  for (std::size_t i = 0; i < members_.size(); ++i) members_[i].id = BackendId{static_cast<std::uint32_t>(i)};
  index();
}

void RoutingTable::index() {
  std::vector<std::size_t> order(members_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return members_[a].priority < members_[b].priority; });
  for (std::size_t i : order) {
    if (groups_.empty() || groups_.back().priority != members_[i].priority)
      groups_.push_back({members_[i].priority, {}});
    groups_.back().members.push_back(i);
    any_quota_ = any_quota_ || members_[i].has_quota();
    id_bound_ = std::max<std::size_t>(id_bound_, members_[i].id.value + 1);
  }
}

}  // namespace smartlb::routing
