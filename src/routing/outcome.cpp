#include "smartlb/routing/outcome.hpp"

#include <algorithm>

namespace smartlb::routing {

std::string_view to_string(FailureCause c) {
  switch (c) {
    case FailureCause::None:
      return "none";
    case FailureCause::Throttled:
      return "throttled";
    case FailureCause::ServerError:
      return "server_error";
    case FailureCause::AuthRejected:
      return "auth_rejected";
    case FailureCause::NotFound:
      return "deployment_not_found";
    case FailureCause::ConnectFailed:
      return "connect_failed";
    case FailureCause::TlsFailed:
      return "tls_failed";
    case FailureCause::Timeout:
      return "timeout";
    case FailureCause::ConnectionLost:
      return "connection_lost";
    case FailureCause::ProtocolError:
      return "protocol_error";
    case FailureCause::FailureTolerance:
      return "failure_tolerance";
    case FailureCause::QuotaExhausted:
      return "quota_exhausted";
    case FailureCause::Credential:
      return "credential";
    case FailureCause::StreamError:
      return "stream_error";
    case FailureCause::Stalled:
      return "stalled";
  }
  return "unknown";
}

Verdict judge_status(unsigned status, bool deployment_path) {
  switch (status) {
    case 429:
      return {true, FailureCause::Throttled, CooldownScope::Deployment};
    case 500:
    case 502:
    case 503:
    case 504:
    case 529:  // Anthropic's overloaded_error
      return {true, FailureCause::ServerError, CooldownScope::Deployment};
    case 401:
    case 403:
      // Credentials belong to the backend, not to one deployment.
      return {true, FailureCause::AuthRejected, CooldownScope::Backend};
    case 404:
      // Only a missing deployment differs between backends; any other 404 would be the
      // same everywhere.
      if (deployment_path) return {true, FailureCause::NotFound, CooldownScope::Deployment};
      return {};
    default:
      // 2xx, 3xx and the other 4xx (400 bad request, context length, content filter) fail
      // identically on every backend: pass through, never cool down.
      return {};
  }
}

std::chrono::milliseconds quota_exhausted_after(std::chrono::nanoseconds quota_window) {
  return std::max<std::chrono::milliseconds>(std::chrono::minutes(1),
                                             std::chrono::ceil<std::chrono::milliseconds>(2 * quota_window));
}

Verdict judge_throttle_hint(const Verdict& v, std::optional<std::chrono::milliseconds> hint,
                            std::chrono::nanoseconds quota_window) {
  if (v.cause != FailureCause::Throttled || !hint || *hint <= quota_exhausted_after(quota_window)) return v;
  Verdict long_quota = v;
  long_quota.cause = FailureCause::QuotaExhausted;
  return long_quota;
}

Verdict judge_stream_error() { return {true, FailureCause::StreamError, CooldownScope::Deployment}; }

Verdict judge_stall() { return {true, FailureCause::Stalled, CooldownScope::Deployment}; }

Verdict judge_transport(TransportFailure f) {
  switch (f) {
    case TransportFailure::Connect:
      return {true, FailureCause::ConnectFailed, CooldownScope::Backend};
    case TransportFailure::Tls:
      return {true, FailureCause::TlsFailed, CooldownScope::Backend};
    case TransportFailure::Timeout:
      return {true, FailureCause::Timeout, CooldownScope::Backend};
    case TransportFailure::Lost:
      return {true, FailureCause::ConnectionLost, CooldownScope::Backend};
    case TransportFailure::Protocol:
      return {true, FailureCause::ProtocolError, CooldownScope::Backend};
  }
  return {true, FailureCause::ConnectionLost, CooldownScope::Backend};
}

}  // namespace smartlb::routing
