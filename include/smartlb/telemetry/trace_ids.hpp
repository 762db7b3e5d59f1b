#pragma once
// A request's W3C Trace Context as the request path records it (tracing/ makes and reads it):
// ids as bytes, so the record stays plain data and costs nothing to reset.
#include <array>
#include <cstdint>
#include <string>

namespace smartlb::telemetry {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

struct RequestTrace {
  bool on = false;          // tracing is on: the request has ids and sends traceparent upstream
  bool sampled = false;     // its spans are recorded and exported
  bool has_parent = false;  // continued from the client's traceparent
  TraceId trace_id{};
  SpanId span_id{};                     // smartlb's SERVER span
  SpanId parent_id{};                   // the client's span (has_parent)
  std::string tracestate;               // the client's, when valid: sent upstream as it came
  std::int64_t wall_start_unix_ns = 0;  // the request's start on the wall clock (span times)

  void reset() {
    on = sampled = has_parent = false;
    tracestate.clear();
  }
};

}  // namespace smartlb::telemetry
