#include "smartlb/tracing/request_trace.hpp"

#include "smartlb/base/text.hpp"
#include "smartlb/tracing/trace_context.hpp"

namespace smartlb::tracing {

void begin_request_trace(telemetry::RequestTrace& t, const Sampler& sampler,
                         std::span<const std::string_view> traceparents,
                         std::span<const std::string_view> tracestates, base::RandomSource& rng,
                         std::int64_t wall_unix_ns) {
  t.on = true;
  t.wall_start_unix_ns = wall_unix_ns;
  std::optional<TraceParent> parent;
  if (traceparents.size() == 1) parent = parse_traceparent(traceparents[0]);
  t.has_parent = parent.has_value();
  if (parent) {
    t.trace_id = parent->trace_id;
    t.parent_id = parent->parent_id;
    t.tracestate = checked_tracestate(tracestates);  // read only beside a valid traceparent
  } else {
    t.trace_id = new_trace_id(rng);
    t.parent_id = {};
    t.tracestate.clear();
  }
  t.span_id = new_span_id(rng);
  t.sampled = sampler.sample(t.trace_id, parent ? std::optional<bool>(parent->sampled()) : std::nullopt);
}

void begin_attempt_trace(const telemetry::RequestTrace& t, telemetry::AttemptRecord& a,
                         base::RandomSource& rng, std::string& head) {
  a.span_id = new_span_id(rng);
  append_trace_fields(head, t.trace_id, a.span_id, t.sampled, t.tracestate);
}

bool is_trace_context_field(std::string_view name) {
  return base::iequals(name, "traceparent") || base::iequals(name, "tracestate");
}

}  // namespace smartlb::tracing
