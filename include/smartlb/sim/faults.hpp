#pragma once
// Fault injection settings and the per-request fault decision. Pure: randomness is passed in
// as a uniform draw in [0, 1).

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace smartlb::sim {

struct FaultConfig {
  int latency_ms = 0;       // delay before the response headers of every API answer
  double error_rate = 0.0;  // probability [0,1] of answering error_status instead
  int error_status = 500;
  int reset_after_chunks =
      -1;            // >= 0: TCP reset after this many SSE events (0 = right after headers); -1 off
  int stall_ms = 0;  // pause of a successful answer
  bool stall_before_headers = false;  // stall before the headers instead of after
  int stall_after_chunks = 0;         // stream: stall after this many SSE events (0 = right after headers)
  int force_status = 0;               // != 0: answer every API request with this status
  int force_retry_after_ms = 0;       // Retry-After for forced answers (429 default: 1000)
  int force_count = -1;               // forced answers left; -1 = unlimited. Counts down to 0 (= off).
  double reset_rate = 0.0;            // probability [0,1] that a successful answer is cut by a TCP reset
                                      // (streams: mid-stream; non-stream: before the headers)
  // Time to first token of generated answers, growing with the prompt like a model's prefill:
  // before the first content event of a stream, before the head of any other answer.
  int first_token_ms = 0;
  double first_token_ms_per_1k_prompt_tokens = 0.0;
  // A slow trickle: a stream's content events come at least this far apart (a backend that is
  // alive and answering, slowly). 0: the generation's own pace.
  int trickle_ms = 0;

  bool operator==(const FaultConfig&) const = default;
};

nlohmann::json faults_to_json(const FaultConfig& faults);

/// Applies the fields present in `patch` (a JSON object) to `faults`. Fields absent keep their
/// value. Returns an error message (and leaves `faults` untouched) on an unknown field, a wrong
/// type or an out-of-range value; empty string on success.
std::string merge_faults(FaultConfig& faults, const nlohmann::json& patch);

struct FaultDecision {
  int status = 0;          // 0: no injected error, serve normally
  bool forced = false;     // from force_status (else from error_rate)
  int retry_after_ms = 0;  // > 0: send Retry-After / retry-after-ms
};

/// Decides whether this request gets an injected error status. force_status wins over
/// error_rate; a forced answer decrements force_count when it is positive (and at 0 forcing
/// stops). `uniform_draw` is only compared against error_rate (error when draw < rate).
FaultDecision decide_fault(FaultConfig& faults, double uniform_draw);

/// Whether deciding needs a random draw (so callers only draw when error_rate > 0).
inline bool fault_needs_draw(const FaultConfig& faults) { return faults.error_rate > 0.0; }

/// Whether a successful answer is cut by a reset drawn from reset_rate (reset when draw < rate).
/// Callers draw only when reset_rate > 0.
inline bool decide_reset(const FaultConfig& faults, double uniform_draw) {
  return faults.reset_rate > 0.0 && uniform_draw < faults.reset_rate;
}

/// The wait before the first content of a generated answer with `prompt_tokens` estimated
/// prompt tokens: first_token_ms + first_token_ms_per_1k_prompt_tokens per 1000 of them,
/// rounded, at most a day.
std::chrono::milliseconds first_token_delay(const FaultConfig& faults, std::int64_t prompt_tokens);

/// The number of SSE events written before a drawn reset cuts a stream of `event_count`
/// events: half of them, but at least one when there is one (so the client saw the stream start).
inline int reset_point_mid_stream(int event_count) { return event_count > 1 ? event_count / 2 : event_count; }

}  // namespace smartlb::sim
