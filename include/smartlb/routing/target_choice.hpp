#pragma once
// One target for one request: the rule's selector among the members that are available, unless
// a member that only its backend's reports hold back may be tested now (a probe) and is at
// least as preferred: its priority group no worse than the pick's. A probe is how a report that
// no longer holds is found out (the limiter refilled in a way nobody predicted): one request at
// a time, at most one per ReportedBudget::kFreshFor for each member.
#include <cstddef>
#include <optional>

#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/candidates.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/selector.hpp"

namespace smartlb::routing {

struct TargetChoice {
  std::size_t position = 0;
  bool probe = false;  // sent to test a member short by its reports
};

std::optional<TargetChoice> choose_target(const Selector& selector, const RoutingTable& table,
                                          BackendStates& states, const PickRequest& request,
                                          base::RandomSource& rng);

// A target chosen for `request`, its declared quota reserved: a member whose quota filled between
// its pick and the reservation (another request took it) is passed over. Every member chosen is
// added to `tried` (the set `request.tried` refers to).
std::optional<TargetChoice> choose_and_reserve(const Selector& selector, const RoutingTable& table,
                                               BackendStates& states, const PickRequest& request,
                                               TriedSet& tried, base::RandomSource& rng);

// Whether some member of `table` not tried yet may serve `request` now (or be probed): when
// none is, the attempt under way is the request's last, and no deadline of smartlb's own cuts it.
bool another_candidate(const RoutingTable& table, const BackendStates& states, const PickRequest& request);

// When no member may serve `request` but some that failed their health probe might: the one
// in the best priority group that has one, the heaviest there.
std::optional<std::size_t> pick_unhealthy(const RoutingTable& table, const BackendStates& states,
                                          const PickRequest& request);

// The member a probe would test at `now`: in the best priority group that has one, the one whose
// cost should be back soonest by its learned refill, then the heaviest (it refills fastest).
std::optional<std::size_t> pick_probe(const RoutingTable& table, const BackendStates& states,
                                      const PickRequest& request, base::MonoNanos now);

}  // namespace smartlb::routing
