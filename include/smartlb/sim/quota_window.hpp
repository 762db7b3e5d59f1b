#pragma once
// Per-deployment rate limit accounting, Azure OpenAI style: a tokens-per-minute (TPM) and a
// requests-per-minute (RPM) limit enforced over a FIXED window of configurable length.
// The per-minute limits are scaled to the window (TPM 60000 with a 1 s window = 1000 tokens
// per window). Windows are aligned to the origin (construction or reset time): window k covers
// [origin + k*window, origin + (k+1)*window). A request is admitted only if both its token
// cost and one request fit in what is left of the current window; a rejected request consumes
// nothing. Pure: time is passed in.

#include "smartlb/sim/clock.hpp"

#include <chrono>
#include <cstdint>

namespace smartlb::sim {

struct QuotaLimits {
  std::int64_t tokens_per_minute = 0;
  std::int64_t requests_per_minute = 0;
};

/// Limit for one window: per_minute * window / 1 min, rounded down, at least 1 unless
/// per_minute is 0 (a zero limit rejects everything).
std::int64_t scale_limit_to_window(std::int64_t per_minute, std::chrono::milliseconds window);

struct QuotaState {
  std::int64_t limit_tokens = 0;
  std::int64_t limit_requests = 0;
  std::int64_t remaining_tokens = 0;
  std::int64_t remaining_requests = 0;
  /// Time until the current window ends (at least 1 ms).
  std::chrono::milliseconds resets_in{0};
};

enum class QuotaVerdict { Admitted, TokensExceeded, RequestsExceeded };

struct QuotaDecision {
  QuotaVerdict verdict = QuotaVerdict::Admitted;
  QuotaState state;  // after the decision
  /// When rejected: time until the next window (at least 1 ms). Zero when admitted.
  std::chrono::milliseconds retry_after{0};
  bool admitted() const { return verdict == QuotaVerdict::Admitted; }
};

class QuotaWindow {
 public:
  QuotaWindow(QuotaLimits limits, std::chrono::milliseconds window, SteadyTime origin);

  /// Charges one request and `tokens` tokens if both fit; otherwise charges nothing.
  QuotaDecision try_consume(std::int64_t tokens, SteadyTime now);
  /// Current remaining quota without charging anything.
  QuotaState peek(SteadyTime now);
  /// Forgets everything used and restarts windows at `now`.
  void reset(SteadyTime now);

  std::int64_t token_limit() const { return token_limit_; }
  std::int64_t request_limit() const { return request_limit_; }

 private:
  void roll_to(SteadyTime now);
  QuotaState state_at(SteadyTime now) const;

  std::int64_t token_limit_;
  std::int64_t request_limit_;
  std::chrono::milliseconds window_;
  SteadyTime origin_;
  std::int64_t window_index_ = 0;
  std::int64_t used_tokens_ = 0;
  std::int64_t used_requests_ = 0;
};

}  // namespace smartlb::sim
