#pragma once
// Latency alone (TrueFoundry's latency-based-routing): among every candidate of the table,
// priorities and weights ignored, the ones whose recent latency per output token is within
// `allowed_overhead_percentage` of the fastest, chosen uniformly at random. A target with fewer
// than kMinSamples samples in the lookback is always a choice, so new or idle targets get the
// traffic that measures them.
#include "smartlb/base/clock.hpp"
#include "smartlb/routing/latency_stats.hpp"
#include "smartlb/routing/selector.hpp"

namespace smartlb::routing {

class LatencySelector final : public Selector {
 public:
  static constexpr std::uint32_t kMinSamples = 3;

  // `stats` must be recorded on the timeline of the states' clock, and outlive the selector.
  // A negative percentage counts as 0 (only the fastest, and the warming-up ones).
  LatencySelector(LatencyStats& stats, base::Nanos lookback, double allowed_overhead_percentage);

  // Reads each candidate's latency for (member.id, member.effective_deployment(deployment)) at
  // the states' clock's now(). The fastest measured candidate sets the bar; eligible are the
  // measured ones at or under fastest * (1 + percentage / 100) and every warming-up one; one
  // of them is drawn with rng.below(eligible count), counting in candidate order (Candidates
  // gathered group by group, best priority first: the order only maps draws to members).
  std::optional<std::size_t> pick(const RoutingTable& table, const BackendStates& states,
                                  const PickRequest& request, base::RandomSource& rng) const override;
  // Learns from complete 2xx answers whose usage tells how many tokens they took: their time
  // per output token.
  void observe(const Answered& a) const override;

 private:
  LatencyStats& stats_;
  base::Nanos lookback_;
  double allowed_factor_;
};

}  // namespace smartlb::routing
