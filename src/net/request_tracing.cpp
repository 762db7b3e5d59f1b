#include "smartlb/net/request_tracing.hpp"

#include <array>
#include <chrono>

#include "smartlb/http/header_rules.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/tracing/request_trace.hpp"
#include "smartlb/tracing/trace_context.hpp"
#include "smartlb/tracing/tracer.hpp"

namespace smartlb::net {

void begin_request_trace(Worker& w, const http1::RequestHead& head, telemetry::RequestRecord& rec) {
  std::string_view parent;
  std::size_t n_parents = 0, n_states = 0;
  for (std::size_t i = 0; i < head.fields.size(); ++i) {
    const auto f = head.fields[i];
    if (base::iequals(f.name, "traceparent")) {
      parent = f.value;
      ++n_parents;
    } else if (base::iequals(f.name, "tracestate")) {
      ++n_states;
    }
  }
  const auto wall =
      std::chrono::duration_cast<std::chrono::nanoseconds>(w.shared.clock.wall_now().time_since_epoch());
  // (Two traceparent fields are no valid context: an empty list says so.)
  const auto begin = [&](std::span<const std::string_view> states) {
    tracing::begin_request_trace(rec.trace, w.shared.tracer->sampler(),
                                 std::span(&parent, n_parents == 1 ? 1 : 0), states, w.rng, wall.count());
  };
  // tracestate is read only beside exactly one traceparent, and more fields of it than a list
  // has members make no valid list: then none is read. (Most requests have neither field.)
  if (n_parents != 1 || n_states == 0 || n_states > tracing::kTraceStateMaxMembers + 1) return begin({});
  std::array<std::string_view, tracing::kTraceStateMaxMembers + 1> states;
  std::size_t k = 0;
  for (std::size_t i = 0; i < head.fields.size() && k < n_states; ++i)
    if (base::iequals(head.fields[i].name, "tracestate")) states[k++] = head.fields[i].value;
  begin(std::span(states.data(), k));
}

void begin_attempt_trace(base::RandomSource& rng, const telemetry::RequestRecord& rec,
                         telemetry::AttemptRecord& a, const config::BackendConfig& b, http::ApiFamily family,
                         std::string& head) {
  a.backend_name = b.name;
  a.server_address = b.url.host;
  a.server_port = b.url.port;
  a.provider = family == http::ApiFamily::Anthropic ? telemetry::AttemptRecord::Provider::Anthropic
               : b.azure_host || family == http::ApiFamily::Azure
                   ? telemetry::AttemptRecord::Provider::AzureOpenAI
                   : telemetry::AttemptRecord::Provider::OpenAI;
  tracing::begin_attempt_trace(rec.trace, a, rng, head);
}

}  // namespace smartlb::net
