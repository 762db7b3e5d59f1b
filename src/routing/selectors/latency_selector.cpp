#include "smartlb/routing/selectors/latency_selector.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

namespace smartlb::routing {

LatencySelector::LatencySelector(LatencyStats& stats, base::Nanos lookback,
                                 double allowed_overhead_percentage)
    : stats_(stats),
      lookback_(lookback),
      allowed_factor_(1 + std::max(allowed_overhead_percentage, 0.0) / 100) {}

std::optional<std::size_t> LatencySelector::pick(const RoutingTable& table, const BackendStates& states,
                                                 const PickRequest& request, base::RandomSource& rng) const {
  const base::MonoNanos now = states.clock().now();
  Candidates candidates;
  for (const PriorityGroup& g : table.groups()) candidates.gather(table, g.members, states, request, now);
  if (candidates.empty()) return std::nullopt;

  // Each candidate's mean, or a negative number while it warms up. Inline for ordinary pools.
  constexpr std::size_t kInline = 64;
  std::array<double, kInline> inline_means;
  std::vector<double> more_means;
  if (candidates.size() > kInline) more_means.resize(candidates.size());
  double* means = candidates.size() > kInline ? more_means.data() : inline_means.data();

  constexpr double kWarmingUp = -1;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const PoolMember& m = table.member(candidates[k]);
    const LatencyReading r = stats_.read(m.id, m.effective_deployment(request.deployment), now, lookback_);
    means[k] = r.samples < kMinSamples ? kWarmingUp : r.ms_per_token;
    if (means[k] != kWarmingUp) best = std::min(best, means[k]);
  }
  const double bar = best * allowed_factor_;  // infinity when nobody is measured yet
  const auto eligible = [&](std::size_t k) { return means[k] == kWarmingUp || means[k] <= bar; };

  std::uint64_t count = 0;
  for (std::size_t k = 0; k < candidates.size(); ++k) count += eligible(k);
  std::uint64_t draw = rng.below(count);  // count >= 1: the fastest is eligible
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (eligible(k) && draw-- == 0) return candidates[k];
  }
  return std::nullopt;  // not reached
}

void LatencySelector::observe(const Answered& a) const {
  if (a.status / 100 != 2 || !a.complete || a.completion_tokens <= 0) return;
  stats_.record(a.backend, a.deployment, a.at, a.took, a.completion_tokens);
}

}  // namespace smartlb::routing
