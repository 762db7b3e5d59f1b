#include "smartlb/routing/selectors/weighted_selector.hpp"

namespace smartlb {

std::optional<std::size_t> WeightedSelector::pick(const RoutingTable& table, const BackendStates& states,
                                                  const PickRequest& request, RandomSource& rng) const {
  const MonoNanos now = states.clock().now();
  Candidates candidates;
  for (const PriorityGroup& g : table.groups()) candidates.gather(table, g.members, states, request, now);
  if (candidates.empty()) return std::nullopt;
  return candidates.draw_weighted(table, rng);
}

}  // namespace smartlb
