#include "smartlb/routing/target_choice.hpp"

namespace smartlb::routing {

std::optional<std::size_t> pick_probe(const RoutingTable& table, const BackendStates& states,
                                      const PickRequest& request, base::MonoNanos now) {
  for (const PriorityGroup& g : table.groups()) {
    std::optional<std::size_t> best;
    base::MonoNanos best_refill = 0;
    for (std::size_t i : g.members) {
      const PoolMember& m = table.member(i);
      if (request.tried.contains(i) || (!m.fallback_candidate && request.tried.count() > 0)) continue;
      const std::optional<base::MonoNanos> refill =
          states.probe_rank(m, request.deployment, now, request.cost, request.reserve);
      if (!refill) continue;
      if (!best || *refill < best_refill ||
          (*refill == best_refill && m.weight > table.member(*best).weight)) {
        best = i;
        best_refill = *refill;
      }
    }
    if (best) return best;
  }
  return std::nullopt;
}

std::optional<TargetChoice> choose_target(const Selector& selector, const RoutingTable& table,
                                          BackendStates& states, const PickRequest& request,
                                          base::RandomSource& rng) {
  const std::optional<std::size_t> picked = selector.pick(table, states, request, rng);
  // Nothing is short by its reports anywhere (the usual case): one relaxed load.
  if (states.reported_budget_low()) {
    const base::MonoNanos now = states.clock().now();
    if (const auto probe = pick_probe(table, states, request, now);
        probe && (!picked || table.member(*probe).priority <= table.member(*picked).priority) &&
        states.claim_probe(table.member(*probe), request.deployment, now))
      return TargetChoice{*probe, true};
  }
  if (picked) return TargetChoice{*picked, false};
  // Every member that may serve failed its health probe: one is used rather than refuse (a probe
  // can be wrong; the request's own attempt says for sure).
  if (const auto unhealthy = pick_unhealthy(table, states, request)) return TargetChoice{*unhealthy, false};
  return std::nullopt;
}

std::optional<std::size_t> pick_unhealthy(const RoutingTable& table, const BackendStates& states,
                                          const PickRequest& request) {
  const base::MonoNanos now = states.clock().now();
  for (const PriorityGroup& g : table.groups()) {
    std::optional<std::size_t> best;
    for (std::size_t i : g.members)
      if (!request.tried.contains(i) && (table.member(i).fallback_candidate || request.tried.count() == 0) &&
          states.standing(table.member(i), request.deployment, now, request.cost, request.reserve) ==
              BackendStates::Standing::Unhealthy &&
          (!best || table.member(i).weight > table.member(*best).weight))
        best = i;
    if (best) return best;
  }
  return std::nullopt;
}

namespace {

// What `request` leaves at each member: for a lower class whose pool's declared quotas keep the
// reserve between them, only its cost in each declared window; none when the pool is short
// (BackendStates::pool_reserve).
std::optional<ClassReserve> member_reserve(const RoutingTable& table, const BackendStates& states,
                                           const PickRequest& request) {
  switch (states.pool_reserve(table, request.deployment, request.cost, request.reserve)) {
    case BackendStates::PoolReserve::Holds:
      return request.reserve.checked_by_pool();
    case BackendStates::PoolReserve::HoldsReports:
      return request.reserve.checked_by_pool(true);
    case BackendStates::PoolReserve::Short:
      return std::nullopt;
    case BackendStates::PoolReserve::Unbounded:
      break;
  }
  return request.reserve;
}

PickRequest leaving(const PickRequest& r, ClassReserve reserve) {
  return PickRequest(r.deployment, r.tried, r.cost, r.affinity_key, r.slow_start, reserve);
}

}  // namespace

std::optional<TargetChoice> choose_and_reserve(const Selector& selector, const RoutingTable& table,
                                               BackendStates& states, const PickRequest& request,
                                               TriedSet& tried, base::RandomSource& rng) {
  const std::optional<ClassReserve> reserve = member_reserve(table, states, request);
  if (!reserve) return std::nullopt;
  const PickRequest at_member = leaving(request, *reserve);
  for (;;) {
    const std::optional<TargetChoice> choice = choose_target(selector, table, states, at_member, rng);
    if (!choice) return std::nullopt;
    tried.add(choice->position);
    if (states.reserve(table.member(choice->position), request.deployment, request.cost, *reserve))
      return choice;
  }
}

bool another_candidate(const RoutingTable& table, const BackendStates& states, const PickRequest& asked) {
  const std::optional<ClassReserve> reserve = member_reserve(table, states, asked);
  if (!reserve) return false;
  const PickRequest request = leaving(asked, *reserve);
  const base::MonoNanos now = states.clock().now();
  using Standing = BackendStates::Standing;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (request.tried.contains(i) || !table.member(i).fallback_candidate) continue;
    const Standing st =
        states.standing(table.member(i), request.deployment, now, request.cost, request.reserve);
    if (st == Standing::Available || st == Standing::Unhealthy) return true;
  }
  return states.reported_budget_low() && pick_probe(table, states, request, now).has_value();
}

}  // namespace smartlb::routing
