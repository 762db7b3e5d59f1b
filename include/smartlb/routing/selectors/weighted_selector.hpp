#pragma once
// Weight alone: a weighted random draw over every candidate of the table, priorities ignored
// (API Management's weight-based routing, TrueFoundry's weight-based-routing).
#include "smartlb/routing/selector.hpp"

namespace smartlb::routing {

class WeightedSelector final : public Selector {
 public:
  std::optional<std::size_t> pick(const RoutingTable& table, const BackendStates& states,
                                  const PickRequest& request, base::RandomSource& rng) const override;
};

}  // namespace smartlb::routing
