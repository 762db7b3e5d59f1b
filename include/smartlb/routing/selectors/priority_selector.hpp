#pragma once
// Priority groups, then weight: the best (lowest-numbered) group with a candidate, and inside
// it a weighted random draw. Lower groups serve only while every better one is out.
#include "smartlb/routing/selector.hpp"

namespace smartlb::routing {

class PrioritySelector final : public Selector {
 public:
  std::optional<std::size_t> pick(const RoutingTable& table, const BackendStates& states,
                                  const PickRequest& request, base::RandomSource& rng) const override;
};

}  // namespace smartlb::routing
