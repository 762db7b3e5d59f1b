#include "smartlb/sim/quota_window.hpp"

#include <algorithm>

namespace smartlb::sim {

std::int64_t scale_limit_to_window(std::int64_t per_minute, std::chrono::milliseconds window) {
  if (per_minute <= 0) return 0;
  constexpr std::int64_t kMinuteMs = 60'000;
  const std::int64_t window_ms = std::max<std::int64_t>(window.count(), 1);
  // per_minute * window_ms / kMinuteMs without overflowing for large limits and windows.
  const std::int64_t scaled =
      per_minute / kMinuteMs * window_ms + per_minute % kMinuteMs * window_ms / kMinuteMs;
  return std::max<std::int64_t>(1, scaled);
}

QuotaWindow::QuotaWindow(QuotaLimits limits, std::chrono::milliseconds window, SteadyTime origin)
    : token_limit_(scale_limit_to_window(limits.tokens_per_minute, window)),
      request_limit_(scale_limit_to_window(limits.requests_per_minute, window)),
      window_(std::max(window, std::chrono::milliseconds(1))),
      origin_(origin) {}

void QuotaWindow::roll_to(SteadyTime now) {
  const auto elapsed = std::max(now - origin_, SteadyTime::duration::zero());
  const std::int64_t index = elapsed / window_;
  if (index != window_index_) {
    window_index_ = index;
    used_tokens_ = 0;
    used_requests_ = 0;
  }
}

QuotaState QuotaWindow::state_at(SteadyTime now) const {
  const auto window_end = origin_ + window_ * (window_index_ + 1);
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(window_end - now);
  QuotaState state;
  state.limit_tokens = token_limit_;
  state.limit_requests = request_limit_;
  state.remaining_tokens = std::max<std::int64_t>(0, token_limit_ - used_tokens_);
  state.remaining_requests = std::max<std::int64_t>(0, request_limit_ - used_requests_);
  state.resets_in = std::max(left, std::chrono::milliseconds(1));
  return state;
}

QuotaDecision QuotaWindow::try_consume(std::int64_t tokens, SteadyTime now) {
  roll_to(now);
  QuotaDecision decision;
  if (used_requests_ + 1 > request_limit_) {
    decision.verdict = QuotaVerdict::RequestsExceeded;
  } else if (used_tokens_ + tokens > token_limit_) {
    decision.verdict = QuotaVerdict::TokensExceeded;
  } else {
    used_requests_ += 1;
    used_tokens_ += tokens;
  }
  decision.state = state_at(now);
  if (!decision.admitted()) decision.retry_after = decision.state.resets_in;
  return decision;
}

QuotaState QuotaWindow::peek(SteadyTime now) {
  roll_to(now);
  return state_at(now);
}

void QuotaWindow::reset(SteadyTime now) {
  origin_ = now;
  window_index_ = 0;
  used_tokens_ = 0;
  used_requests_ = 0;
}

}  // namespace smartlb::sim
