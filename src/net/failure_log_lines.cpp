#include "smartlb/net/failure_log_lines.hpp"

#include <spdlog/spdlog.h>

namespace smartlb::net {
namespace {

// What follows the failure, for its line.
std::string_view then(const routing::FailedAttempt& f) {
  if (f.end == routing::AttemptEnd::CutAfterHead) return "its stream to the client cut short";
  if (f.relayed_anyway) return "no failover (its request body was streamed)";
  return "failing over";
}

}  // namespace

void FailureLogLines::failed(const routing::FailedAttempt& f) {
  const std::int64_t cooldown_ms = f.cooldown.count();
  if (f.breaker_tripped)
    spdlog::warn("target {} failed more than {} time(s) in a minute: out for {} s (failure_tolerance)",
                 f.target_id, f.allowed_per_minute,
                 std::chrono::duration_cast<std::chrono::seconds>(f.breaker_cooldown).count());
  switch (f.verdict.cause) {
    case routing::FailureCause::AuthRejected:
      spdlog::error("backend {} rejected its credentials ({}): check {}; cooling down {} ms", f.backend,
                    f.why, f.key_setting.empty() ? std::string_view("its key") : f.key_setting, cooldown_ms);
      break;
    case routing::FailureCause::QuotaExhausted:
      spdlog::warn(
          "backend {} says its quota for {} is exhausted for {} s ({}, not a rate limit); cooling down {} "
          "ms, {}",
          f.backend, f.deployment,
          std::chrono::ceil<std::chrono::seconds>(f.hint.value_or(std::chrono::milliseconds(0))).count(),
          f.why, cooldown_ms, then(f));
      break;
    case routing::FailureCause::Throttled:
    case routing::FailureCause::ServerError:
    case routing::FailureCause::NotFound:
      spdlog::debug("backend {} answered {}; cooling down {} ms, {}", f.backend, f.why, cooldown_ms, then(f));
      break;
    default:
      spdlog::warn("backend {} failed ({}: {}); cooling down {} ms, {}", f.backend,
                   to_string(f.verdict.cause), f.why, cooldown_ms, then(f));
      break;
  }
}

}  // namespace smartlb::net
