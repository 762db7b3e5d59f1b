#pragma once
// Which requests are traced: OpenTelemetry's samplers (OTEL_TRACES_SAMPLER and its _ARG), as
// the SDKs define them. A decision depends only on the trace id and the client's parent, so
// every replica (and every SDK) decides the same for the same trace.
#include <cstdint>
#include <optional>
#include <string_view>

#include "smartlb/telemetry/trace_ids.hpp"

namespace smartlb::tracing {

enum class SamplerKind : std::uint8_t {
  AlwaysOn,
  AlwaysOff,
  TraceIdRatio,
  ParentBasedAlwaysOn,  // the default
  ParentBasedAlwaysOff,
  ParentBasedTraceIdRatio,
};

std::string_view to_string(SamplerKind k);
std::optional<SamplerKind> parse_sampler_kind(std::string_view name);
bool takes_ratio(SamplerKind k);

struct SamplerConfig {
  SamplerKind kind = SamplerKind::ParentBasedAlwaysOn;
  double ratio = 1.0;  // TraceIdRatio and ParentBasedTraceIdRatio: 0..1
};

class Sampler {
 public:
  explicit Sampler(SamplerConfig config = {});
  // Whether a request of trace `trace_id` is recorded. `parent_sampled`: the sampled flag of
  // the client's traceparent, when it sent a valid one. Parent-based samplers follow it; the
  // others decide alone. A ratio keeps a trace when the last 8 bytes of its id, read as a
  // big-endian number and shifted right once, are below ratio * 2^63 (the Go and Java SDKs' rule).
  bool sample(const telemetry::TraceId& trace_id, std::optional<bool> parent_sampled) const;
  const SamplerConfig& config() const { return config_; }

 private:
  bool root_decision(const telemetry::TraceId& trace_id) const;

  SamplerConfig config_;
  std::uint64_t ratio_bound_ = 0;
};

}  // namespace smartlb::tracing
