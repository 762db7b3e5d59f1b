#pragma once
// Tracing's settings, from OpenTelemetry's standard variables (OTEL_EXPORTER_OTLP_*,
// OTEL_TRACES_*, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*). Off unless an OTLP
// endpoint is set. Read once at start; every problem is reported at once, naming its variable
// and never quoting a header's value (they carry keys).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smartlb/config/config_env.hpp"
#include "smartlb/tracing/sampler.hpp"

namespace smartlb::tracing {

struct TraceConfig {
  // The URL spans are POSTed to: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, or
  // OTEL_EXPORTER_OTLP_ENDPOINT + "/v1/traces". Empty: tracing is off.
  std::string endpoint;
  std::vector<std::pair<std::string, std::string>> headers;  // values are secret: never logged
  std::chrono::milliseconds timeout{10'000};                 // one export, connect to answer
  std::string certificate_file;                              // CA bundle for an https endpoint
  SamplerConfig sampler;
  std::vector<std::pair<std::string, std::string>> resource;  // service.name first
  // The batch span processor's limits (the SDKs' defaults).
  std::size_t max_queue_spans = 2048;
  std::size_t max_batch_spans = 512;
  std::chrono::milliseconds schedule_delay{5'000};

  bool enabled() const { return !endpoint.empty(); }
};

struct TraceConfigResult {
  std::optional<TraceConfig> config;  // set when there is no error (tracing on or off)
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

// The settings in `env`. Without an endpoint (or with OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none) tracing is off and no other OTEL_* variable is looked at: they may
// be set for other programs sharing the environment.
TraceConfigResult load_trace_config(const config::EnvMap& env);

// A `key=value,key=value` list (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS): keys and
// values trimmed, values percent-decoded. The problem, or nullopt; a problem names the entry
// by its position, never its value.
std::optional<std::string> parse_key_value_list(std::string_view text,
                                                std::vector<std::pair<std::string, std::string>>& out);

}  // namespace smartlb::tracing
