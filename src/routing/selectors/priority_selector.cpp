#include "smartlb/routing/selectors/priority_selector.hpp"
#include "smartlb/routing/affinity.hpp"

namespace smartlb::routing {

std::optional<std::size_t> PrioritySelector::pick(const RoutingTable& table, const BackendStates& states,
                                                  const PickRequest& request, base::RandomSource& rng) const {
  const base::MonoNanos now = states.clock().now();
  Candidates candidates;
  for (const PriorityGroup& g : table.groups()) {
    candidates.gather(table, g.members, states, request, now);
    if (!candidates.empty())
      return request.affinity_key.empty() ? candidates.draw_weighted(table, rng)
                                          : pick_by_affinity(request.affinity_key, candidates, table);
  }
  return std::nullopt;
}

}  // namespace smartlb::routing
