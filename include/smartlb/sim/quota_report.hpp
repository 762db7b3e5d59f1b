#pragma once
// What an answer reports of the quota in x-ratelimit-remaining-* / x-ratelimit-limit-*.
// Real services' reports are approximate and sometimes plainly wrong: remaining counts move in
// ways no window model predicts, and Azure's Responses API has been seen answering -1 for
// remaining and limit. ReportNoise reproduces both, from an injected uniform random source.

#include "smartlb/sim/deployment_quota.hpp"

#include <cstdint>
#include <functional>

namespace smartlb::sim {

struct ReportNoise {
  /// Each reported remaining is multiplied by a uniform draw in [1 - jitter, 1 + jitter],
  /// rounded to the nearest integer, never below 0. 0 = exact reports.
  double jitter = 0.0;
  /// Probability that an answer reports -1 for remaining and limit (both quantities).
  double unknown_rate = 0.0;

  bool operator==(const ReportNoise&) const = default;
};

struct QuotaReport {
  std::int64_t remaining_requests = 0;
  std::int64_t remaining_tokens = 0;
  std::int64_t limit_requests = 0;
  std::int64_t limit_tokens = 0;
};

/// The report of `state`. `random01` returns uniform draws in [0, 1) and is called only when
/// noise is configured: first one draw for unknown_rate (when > 0; unknown when draw < rate),
/// then, unless unknown, one draw per remaining figure for jitter (when > 0): requests, tokens.
QuotaReport report_quota(const QuotaState& state, const ReportNoise& noise,
                         const std::function<double()>& random01);

}  // namespace smartlb::sim
