#include "smartlb/sim/deployment_quota.hpp"

#include <algorithm>

namespace smartlb::sim {

DeploymentQuota::DeploymentQuota(QuotaLimits limits, const LimiterSettings& settings, SteadyTime origin)
    : tokens_(make_rate_limiter(settings.kind,
                                scale_limit_to_window(limits.tokens_per_minute, settings.window),
                                settings.window, settings.burst, origin)) {
  if (settings.limit_header_per_window) {
    stated_tokens_ = scale_limit_to_window(limits.tokens_per_minute, settings.window);
    stated_requests_ =
        scale_limit_to_window(limits.requests_per_minute, settings.rpm_interval.value_or(settings.window));
  }
  if (settings.rpm_interval) {
    const auto interval = *settings.rpm_interval;
    requests_ =
        make_rate_limiter(LimiterKind::Fixed, scale_limit_to_window(limits.requests_per_minute, interval),
                          interval, interval, origin);
  } else {
    requests_ =
        make_rate_limiter(settings.kind, scale_limit_to_window(limits.requests_per_minute, settings.window),
                          settings.window, settings.burst, origin);
  }
}

QuotaDecision DeploymentQuota::try_consume(std::int64_t tokens, SteadyTime now) {
  QuotaDecision decision;
  const bool request_fits = requests_->remaining(now) >= 1;
  const bool tokens_fit = tokens_->remaining(now) >= tokens;
  if (request_fits && tokens_fit) {
    requests_->take(1, now);
    tokens_->take(tokens, now);
  } else {
    decision.verdict = request_fits ? QuotaVerdict::TokensExceeded : QuotaVerdict::RequestsExceeded;
    // Each limiter only gains room while nothing is charged, so the request fits once both
    // waits have passed.
    const auto wait = std::max(requests_->wait_until_fits(1, now), tokens_->wait_until_fits(tokens, now));
    decision.retry_after =
        std::max(std::chrono::ceil<std::chrono::milliseconds>(wait), std::chrono::milliseconds(1));
  }
  decision.state = peek(now);
  return decision;
}

QuotaState DeploymentQuota::peek(SteadyTime now) {
  QuotaState state;
  state.limit_tokens = stated_tokens_ > 0 ? stated_tokens_ : tokens_->capacity();
  state.limit_requests = stated_requests_ > 0 ? stated_requests_ : requests_->capacity();
  state.remaining_tokens = tokens_->remaining(now);
  state.remaining_requests = requests_->remaining(now);
  return state;
}

QuotaRefill DeploymentQuota::until_full(SteadyTime now) {
  // A limiter is full once its whole capacity fits again.
  return {tokens_->wait_until_fits(tokens_->capacity(), now),
          requests_->wait_until_fits(requests_->capacity(), now)};
}

void DeploymentQuota::reset(SteadyTime now) {
  tokens_->reset(now);
  requests_->reset(now);
}

}  // namespace smartlb::sim
