#pragma once
// Passive health, step one: what one attempt's outcome means. Plain observations in
// (status code, transport failure), a verdict out; BackendPool applies it.
#include <cstdint>
#include <string_view>

namespace smartlb {

enum class FailureCause : std::uint8_t {
  None = 0,
  Throttled,       // 429
  ServerError,     // 500, 502, 503, 504
  AuthRejected,    // 401, 403: this backend's credentials are wrong
  NotFound,        // 404 on a deployment path: deployment missing on this backend
  ConnectFailed,   // DNS, refused, unreachable
  TlsFailed,       // handshake or certificate verification
  Timeout,         // no response headers (or no bytes mid-stream) within the timeout
  ConnectionLost,  // reset or closed before a complete response header
  ProtocolError,   // unparseable response
  Credential,      // no valid Entra ID token could be had for this backend (not sent at all)
};

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

enum class TransportFailure : std::uint8_t { Connect, Tls, Timeout, Lost, Protocol };
Verdict judge_transport(TransportFailure f);

}  // namespace smartlb
