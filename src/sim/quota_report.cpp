#include "smartlb/sim/quota_report.hpp"

#include <algorithm>
#include <cmath>

namespace smartlb::sim {
namespace {

std::int64_t jittered(std::int64_t remaining, double jitter, double draw) {
  const double factor = 1.0 - jitter + 2.0 * jitter * draw;
  return std::max<std::int64_t>(0, std::llround(static_cast<double>(remaining) * factor));
}

}  // namespace

QuotaReport report_quota(const QuotaState& state, const ReportNoise& noise,
                         const std::function<double()>& random01) {
  if (noise.unknown_rate > 0.0 && random01() < noise.unknown_rate) return {-1, -1, -1, -1};
  QuotaReport report{state.remaining_requests, state.remaining_tokens, state.limit_requests,
                     state.limit_tokens};
  if (noise.jitter > 0.0) {
    report.remaining_requests = jittered(report.remaining_requests, noise.jitter, random01());
    report.remaining_tokens = jittered(report.remaining_tokens, noise.jitter, random01());
  }
  return report;
}

}  // namespace smartlb::sim
