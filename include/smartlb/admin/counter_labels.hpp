#pragma once
// How /status and /metrics name the codes of the metrics' labelled counters.
#include <cstdint>
#include <string>

#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::admin {

// The `code` of an UpstreamResponses counter as both endpoints show it: the response status,
// "other" (outside 100..599), or "transport" when no response head arrived.
inline std::string upstream_code_label(std::uint32_t code) {
  if (code >= telemetry::kUpstreamTransport) return "transport";
  return code == telemetry::kUpstreamOtherStatus ? std::string("other") : std::to_string(code);
}

// The cause of a transport failure in an UpstreamResponses code (code >= kUpstreamTransport).
inline routing::FailureCause upstream_transport_cause(std::uint32_t code) {
  return static_cast<routing::FailureCause>(code - telemetry::kUpstreamTransport);
}

}  // namespace smartlb::admin
