#include "smartlb/net/request_tracing.hpp"

#include <array>
#include <chrono>

#include "smartlb/http/header_rules.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/tracing/request_trace.hpp"
#include "smartlb/tracing/trace_context.hpp"
#include "smartlb/tracing/tracer.hpp"

namespace smartlb::net {

void begin_request_trace(Worker& w, const http1::RequestHead& head, RequestRecord& rec) {
  // More fields of a name than this is no valid context (and a client head is bounded anyway).
  std::array<std::string_view, tracing::kTraceStateMaxMembers + 1> parents{}, states{};
  std::size_t n_parents = 0, n_states = 0;
  for (std::size_t i = 0; i < head.fields.size(); ++i) {
    const auto f = head.fields[i];
    if (iequals(f.name, "traceparent"))
      parents[std::min(n_parents++, parents.size() - 1)] = f.value;
    else if (iequals(f.name, "tracestate"))
      states[std::min(n_states++, states.size() - 1)] = f.value;
  }
  const auto wall =
      std::chrono::duration_cast<std::chrono::nanoseconds>(w.shared.clock.wall_now().time_since_epoch());
  // (Past the array, the fields are too many to be valid: none is read.)
  const std::size_t parents_read = n_parents > parents.size() ? 0 : n_parents;
  const std::size_t states_read = n_states > states.size() ? 0 : n_states;
  tracing::begin_request_trace(rec.trace, w.shared.tracer->sampler(), std::span(parents.data(), parents_read),
                               std::span(states.data(), states_read), w.rng, wall.count());
}

void begin_attempt_trace(Worker& w, const RequestRecord& rec, AttemptRecord& a, const BackendConfig& b,
                         bool azure_path, std::string& head) {
  a.backend_name = b.name;
  a.server_address = b.url.host;
  a.server_port = b.url.port;
  a.azure = b.azure_host || azure_path;
  tracing::begin_attempt_trace(rec.trace, a, w.rng, head);
}

}  // namespace smartlb::net
