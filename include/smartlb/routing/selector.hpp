#pragma once
// How one candidate is chosen: a strategy per file under selectors/. A selector reads the
// table and the states and changes neither; the caller reserves and sends.
#include <optional>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/backend_id.hpp"

#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/candidates.hpp"
#include "smartlb/routing/routing_table.hpp"

namespace smartlb::routing {

// How a request a member served ended, for the selectors that learn from answers.
struct Answered {
  BackendId backend;
  std::string_view deployment;  // the member's state key (effective_deployment)
  unsigned status = 0;
  bool complete = false;                // relayed to its end: neither side cut it short
  base::MonoNanos at = 0;               // when it ended
  base::Nanos took{0};                  // from the request's send
  std::int64_t completion_tokens = -1;  // from its usage (-1: not told)
};

class Selector {
 public:
  virtual ~Selector() = default;
  // A table position that may serve `request`, or nullopt when none is left.
  virtual std::optional<std::size_t> pick(const RoutingTable& table, const BackendStates& states,
                                          const PickRequest& request, base::RandomSource& rng) const = 0;
  // An answer one of its members gave (thread-safe: any worker calls it). Nothing by default.
  virtual void observe(const Answered&) const {}
};

}  // namespace smartlb::routing
