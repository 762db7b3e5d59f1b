#include "smartlb/routing/attempt_accounting.hpp"

#include <string>

namespace smartlb::routing {

Judged judge_answer(unsigned status, const http::ThrottleHeaders& h, bool names_model,
                    base::Nanos quota_window, std::chrono::system_clock::time_point wall_now) {
  Judged j;
  j.report = parse_rate_limit_report(h, wall_now);
  j.verdict = judge_status(status, names_model);
  if (!j.verdict.fail_over) return j;
  j.hint = parse_retry_hint(h, wall_now);
  j.verdict = judge_throttle_hint(j.verdict, j.hint, quota_window);
  return j;
}

Accounted account_failure(BackendStates& states, FailureBreakers& breakers, const PoolMember& m,
                          std::string_view deployment, const BreakerRule& breaker, const Verdict& v,
                          std::optional<std::chrono::milliseconds> hint, base::MonoNanos sent,
                          base::MonoNanos now) {
  Accounted a;
  a.cooldown = states.record_failure(m, deployment, v, hint, sent);
  if (!breaker.allowed_per_minute || v.cause == FailureCause::Credential) return a;
  const std::string_view key = m.effective_deployment(deployment);
  if (breakers.record(m.id, key, *breaker.allowed_per_minute, now)) {
    states.hold(m, deployment, FailureCause::FailureTolerance, breaker.cooldown);
    a.breaker_tripped = true;
  } else if (FailureSharer* sharer = breakers.sharer()) {
    // Other replicas may have failed there too: the shared count may trip it (later, off this path).
    sharer->count({std::string(m.name), std::string(key), std::string(breaker.target_id),
                   *breaker.allowed_per_minute, breaker.cooldown});
  }
  return a;
}

}  // namespace smartlb::routing
