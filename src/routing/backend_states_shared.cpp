// What other replicas read and did at the backends, applied here (routing/report_sharing.hpp,
// redis::SharedReports).
#include <algorithm>

#include "smartlb/routing/backend_states.hpp"

namespace smartlb::routing {

namespace {

constexpr std::int64_t kMaxAgeMs = 60'000;                  // older says nothing
constexpr std::int64_t kMaxAheadMs = 7LL * 24 * 3'600'000;  // a week, as for a shared cooldown

std::int64_t wall_now_ms(const base::Clock& clock) {
  return std::chrono::duration_cast<base::Millis>(clock.wall_now().time_since_epoch()).count();
}

}  // namespace

bool BackendStates::apply_shared_report(std::string_view backend, std::string_view deployment,
                                        const RateLimitReport& report, std::int64_t sent_epoch_ms) {
  if (!route_on_remaining_ || report.empty()) return false;
  const base::MonoNanos now = clock_.now();
  // Another replica's clock: never in the future here, and a report a minute old says nothing.
  const std::int64_t age_ms = std::max<std::int64_t>(wall_now_ms(clock_) - sent_epoch_ms, 0);
  if (age_ms > kMaxAgeMs) return false;
  PoolMember m;
  if (!current_member(backend, m)) return false;
  DeploymentState& d = deployment_state(m, deployment);  // `deployment` is already a state key
  const int change = d.reported.observe_shared(report, now - age_ms * 1'000'000);
  if (change != 0) watched_reports_.fetch_add(change, std::memory_order_relaxed);
  return true;
}

bool BackendStates::apply_shared_moment(std::string_view backend, std::string_view deployment,
                                        MomentNotice::Kind kind, std::int64_t at_epoch_ms) {
  if (!route_on_remaining_ || !reported_budget_low()) return false;
  PoolMember m;
  if (!current_member(backend, m)) return false;
  DeploymentState* d = find_deployment(m.id, deployment);  // `deployment` is already a state key
  if (d == nullptr || !d->reported.watched()) return false;
  // Another replica's clock, on this one: a minute in the past at most, a week ahead.
  const std::int64_t ahead_ms =
      std::clamp<std::int64_t>(at_epoch_ms - wall_now_ms(clock_), -kMaxAgeMs, kMaxAheadMs);
  const base::MonoNanos at = clock_.now() + ahead_ms * 1'000'000;
  switch (kind) {
    case MomentNotice::Kind::Probe:  // out for kFreshFor at most, wherever it was taken
      if (ahead_ms > 0)
        d->reported.probe_elsewhere(std::min(at, clock_.now() + ReportedBudget::kFreshFor.count()));
      return true;
    case MomentNotice::Kind::Retry:  // the answer a probe there was sent for, if one was out
      // A deployment that reports nothing learns the echo of this replica's own sends from its
      // own 429s: another replica's moments are the echo of sends it does not know.
      if (d->reported.blind()) return false;
      d->reported.probe_elsewhere_answered();
      d->reported.retry_at(at);
      return true;
  }
  return false;
}

}  // namespace smartlb::routing
