#pragma once
// Passive health, step one: what one attempt's outcome means. Plain observations in
// (status code, transport failure), a verdict out; BackendPool applies it.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace smartlb::routing {

enum class FailureCause : std::uint8_t {
  None = 0,
  Throttled,         // 429
  ServerError,       // 500, 502, 503, 504
  AuthRejected,      // 401, 403: this backend's credentials are wrong
  NotFound,          // 404 on a deployment path: deployment missing on this backend
  ConnectFailed,     // DNS, refused, unreachable
  TlsFailed,         // handshake or certificate verification
  Timeout,           // no response headers (or no bytes mid-stream) within the timeout
  ConnectionLost,    // reset or closed before a complete response header
  ProtocolError,     // unparseable response
  FailureTolerance,  // its breaker tripped: more failovers in a minute than model_configs allow
  QuotaExhausted,    // 429 whose hint is far past any rate-limit window (a daily or monthly quota)
  Credential,        // no valid Entra ID token could be had for this backend (not sent at all)
  StreamError,       // a 2xx event stream whose first event is a (server) error, before any content
  Stalled,           // no answer head, or no content of a stream, within its first-token deadline
};

inline constexpr FailureCause kLastFailureCause = FailureCause::Stalled;

// The causes that are the backend limiting its rate (smartlb answers 429 when all are out).
constexpr bool is_rate_limit(FailureCause c) {
  return c == FailureCause::Throttled || c == FailureCause::QuotaExhausted;
}

std::string_view to_string(FailureCause c);

enum class CooldownScope : std::uint8_t {
  Deployment,  // (backend, deployment): quota and deployment problems
  Backend,     // the whole backend: network, TLS, credentials
};

struct Verdict {
  bool fail_over = false;  // cool down and try the next backend at once
  FailureCause cause = FailureCause::None;
  CooldownScope scope = CooldownScope::Deployment;
};

// Judges a response status. `deployment_path` is true for /openai/deployments/{d}/... .
Verdict judge_status(unsigned status, bool deployment_path);

// A 429 whose hint is longer than this is a quota exhausted for a long time, not a short rate
// limit: twice the quota window (QUOTA_WINDOW_SECONDS), and never under a minute (Azure's
// rate-limit 429s ask for at most the rest of their minute).
std::chrono::milliseconds quota_exhausted_after(std::chrono::nanoseconds quota_window);
// Tells a 429 verdict's long quota from a short rate limit by its hint; other verdicts pass.
Verdict judge_throttle_hint(const Verdict& v, std::optional<std::chrono::milliseconds> hint,
                            std::chrono::nanoseconds quota_window);

// A 2xx event stream whose first event is an error another backend might not make (held back
// before anything went to the client, so it can still fail over): judged like a 5xx.
Verdict judge_stream_error();

// An attempt that sent nothing within its first-token deadline (docs/configuration.md, Timeouts):
// that deployment on that backend is slow or hung, and the request goes to another at once.
Verdict judge_stall();

enum class TransportFailure : std::uint8_t { Connect, Tls, Timeout, Lost, Protocol };
Verdict judge_transport(TransportFailure f);

}  // namespace smartlb::routing
