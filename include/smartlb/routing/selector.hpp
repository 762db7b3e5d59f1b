#pragma once
// How one candidate is chosen: a strategy per file under selectors/. A selector reads the
// table and the states and changes neither; the caller reserves and sends.
#include <optional>

#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/candidates.hpp"
#include "smartlb/routing/routing_table.hpp"

namespace smartlb {

class Selector {
 public:
  virtual ~Selector() = default;
  // A table position that may serve `request`, or nullopt when none is left.
  virtual std::optional<std::size_t> pick(const RoutingTable& table, const BackendStates& states,
                                          const PickRequest& request, RandomSource& rng) const = 0;
};

}  // namespace smartlb
