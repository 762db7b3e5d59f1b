#pragma once
// What the request path does for tracing, as plain functions: a request's trace begins (ids,
// the sampler's decision, the client's context continued), and each attempt gets a CLIENT span
// id and the trace fields of its upstream request. Spans are made later, from the record
// (span_model.hpp).
#include <span>
#include <string>
#include <string_view>

#include "smartlb/base/random.hpp"
#include "smartlb/telemetry/request_record.hpp"
#include "smartlb/tracing/sampler.hpp"

namespace smartlb::tracing {

// `traceparents` and `tracestates`: the values of the client's fields of those names, in order.
// Exactly one valid traceparent continues the client's trace (its trace id, its span as the
// parent, its tracestate when valid); anything else starts a new trace. The SERVER span gets a
// new id either way, and `t.sampled` is the sampler's decision.
void begin_request_trace(telemetry::RequestTrace& t, const Sampler& sampler,
                         std::span<const std::string_view> traceparents,
                         std::span<const std::string_view> tracestates, base::RandomSource& rng,
                         std::int64_t wall_unix_ns);

// A new CLIENT span id for attempt `a`, and its upstream fields appended to `head`: traceparent
// with that span as the parent (sampled or not, as the request) and the client's tracestate.
// A request that is not sampled propagates its trace id with the sampled flag 0, like an
// OpenTelemetry SDK's span that is not recorded.
void begin_attempt_trace(const telemetry::RequestTrace& t, telemetry::AttemptRecord& a,
                         base::RandomSource& rng, std::string& head);

// The client's fields that tracing replaces on the upstream request.
bool is_trace_context_field(std::string_view name);

}  // namespace smartlb::tracing
