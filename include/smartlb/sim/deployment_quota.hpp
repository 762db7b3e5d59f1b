#pragma once
// One deployment's rate limits, Azure OpenAI style: a tokens-per-minute (TPM) and a
// requests-per-minute (RPM) limit, each enforced by a RateLimiter of the configured model
// (fixed window, sliding window or token bucket; requests optionally per fixed sub-interval).
// The per-minute limits are scaled to the window (TPM 60000 with a 1 s window = 1000 tokens
// per window). A request is admitted only if one request and its token cost both fit; a
// rejected request consumes nothing. Pure: time is passed in.

#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/limiter_settings.hpp"
#include "smartlb/sim/rate_limiter.hpp"

#include <chrono>
#include <cstdint>
#include <memory>

namespace smartlb::sim {

struct QuotaLimits {
  std::int64_t tokens_per_minute = 0;
  std::int64_t requests_per_minute = 0;
};

struct QuotaState {
  std::int64_t limit_tokens = 0;
  std::int64_t limit_requests = 0;
  std::int64_t remaining_tokens = 0;
  std::int64_t remaining_requests = 0;
};

/// How long until each limiter is back to full (zero when it is): when a report's "reset" is.
struct QuotaRefill {
  std::chrono::nanoseconds tokens{0};
  std::chrono::nanoseconds requests{0};
};

enum class QuotaVerdict { Admitted, TokensExceeded, RequestsExceeded };

struct QuotaDecision {
  QuotaVerdict verdict = QuotaVerdict::Admitted;
  QuotaState state;  // after the decision
  /// When rejected: time until the request would fit on both limits (rounded up to whole
  /// milliseconds, at least 1 ms). Zero when admitted.
  std::chrono::milliseconds retry_after{0};
  bool admitted() const { return verdict == QuotaVerdict::Admitted; }
};

class DeploymentQuota {
 public:
  DeploymentQuota(QuotaLimits limits, const LimiterSettings& settings, SteadyTime origin);

  /// Charges one request and `tokens` tokens if both fit; otherwise charges nothing. When
  /// both limits are exceeded the verdict names the request limit.
  QuotaDecision try_consume(std::int64_t tokens, SteadyTime now);
  /// Current remaining quota without charging anything.
  QuotaState peek(SteadyTime now);
  /// Time from `now` until nothing is used any more (nothing more being charged).
  QuotaRefill until_full(SteadyTime now);
  /// Forgets everything used and restarts the limiters at `now`.
  void reset(SteadyTime now);

  const RateLimiter& tokens() const { return *tokens_; }
  const RateLimiter& requests() const { return *requests_; }

 private:
  std::unique_ptr<RateLimiter> tokens_;
  std::unique_ptr<RateLimiter> requests_;
  // What the limit headers state when they state the limit per window (0: the capacity).
  std::int64_t stated_tokens_ = 0, stated_requests_ = 0;
};

}  // namespace smartlb::sim
