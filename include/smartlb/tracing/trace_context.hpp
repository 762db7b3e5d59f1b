#pragma once
// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// fields read from a client and written upstream, and the ids a new trace or span gets. Pure:
// the random source is passed in.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "smartlb/base/random.hpp"
#include "smartlb/telemetry/trace_ids.hpp"

namespace smartlb::tracing {

struct TraceParent {
  telemetry::TraceId trace_id{};
  telemetry::SpanId parent_id{};
  std::uint8_t flags = 0;
  bool sampled() const { return (flags & 1) != 0; }
};

// A `traceparent` value, or nullopt when the spec says to ignore it: version ff, a version or
// id that is not lower-case hex, an all-zero trace or parent id, version 00 not exactly 55
// characters. A later version is read leniently, as the spec asks: its first 55 characters
// as version 00's, followed by the end or a '-'.
std::optional<TraceParent> parse_traceparent(std::string_view value);

// The longest `tracestate` smartlb passes on whole; a longer one loses members (see below).
inline constexpr std::size_t kTraceStateMaxBytes = 512;
inline constexpr std::size_t kTraceStateMaxMembers = 32;

// What goes upstream of the client's `tracestate` fields (several are one list, joined by
// commas): the value unchanged when it follows the spec's grammar (keys, values, at most 32
// members, no key twice) and fits in 512 characters; a longer one loses its members over 128
// characters, then members from the right, until it fits (the spec's truncation order). "" when
// it is invalid (it is then dropped: the traceparent still goes).
std::string checked_tracestate(std::span<const std::string_view> fields);

// New ids: random, never all zero.
telemetry::TraceId new_trace_id(base::RandomSource& rng);
telemetry::SpanId new_span_id(base::RandomSource& rng);

// "traceparent: 00-<trace id>-<span id>-<flags>\r\n" (version 00, flags the sampled bit), and
// "tracestate: <value>\r\n" when there is one: the fields of an upstream request.
void append_trace_fields(std::string& out, const telemetry::TraceId& trace, const telemetry::SpanId& span,
                         bool sampled, std::string_view tracestate);

// Lower-case hex of an id (32 or 16 characters; bytes past 16 are not written).
void append_hex(std::string& out, std::span<const std::uint8_t> bytes);
template <std::size_t N>
std::string to_hex(const std::array<std::uint8_t, N>& id) {
  std::string s;
  append_hex(s, id);
  return s;
}

}  // namespace smartlb::tracing
