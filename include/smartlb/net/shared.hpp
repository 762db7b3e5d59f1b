#pragma once
// What every worker thread shares: the process settings, the published snapshot, the runtime
// state that outlives snapshots (backend states, latency samples, failure counts), the clock,
// the upstream TLS context and the observer, and the counters of connections and the drain.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>

#include "smartlb/base/clock.hpp"
#include "smartlb/base/published.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/net/buffered_bodies.hpp"
#include "smartlb/net/failure_log_lines.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/net/stateful_route.hpp"
#include "smartlb/routing/attempt_ticket.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/failure_breakers.hpp"
#include "smartlb/routing/latency_stats.hpp"
#include "smartlb/telemetry/access_log_writer.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::tracing {
class Tracer;
}

namespace smartlb::net {

struct Shared {
  Shared(const config::Config& c, const base::Published<Snapshot>& p, routing::BackendStates& s,
         routing::LatencyStats& l, const base::Clock& k, io::ssl::context& t, telemetry::RequestObserver* o)
      : cfg(c), published(p), states(s), latency(l), clock(k), tls(t), observer(o) {}

  const config::Config& cfg;  // process settings (listeners, timeouts, limits); backends come from snapshots
  const base::Published<Snapshot>& published;
  routing::BackendStates& states;
  routing::LatencyStats& latency;     // latency rules' samples (survive reloads, like `states`)
  routing::FailureBreakers breakers;  // failure_tolerance counts (survive reloads, like `states`)
  LearntPlacements placements;        // where untagged ids were found (docs/stateful-apis.md)
  const base::Clock& clock;
  io::ssl::context& tls;
  telemetry::RequestObserver* observer = nullptr;  // metrics; may be null
  tracing::Tracer* tracer = nullptr;               // null: tracing is off, and the request path never asks
  telemetry::AccessLogWriter* access_log_writer = nullptr;  // null: ACCESS_LOG=off
  std::atomic<std::size_t> connections{0};
  BufferedBodies buffered_bodies{cfg.max_buffered_bodies_bytes};  // MAX_BUFFERED_BODIES_BYTES
  std::atomic<bool> draining{false};
  // Requests waiting for capacity now, by priority class level (its max_queue_length).
  std::array<std::atomic<std::uint32_t>, config::kMaxPriorityClasses> waiting_for_capacity{};
  std::function<void()> on_drained;  // called (from any worker) when the last connection ends
  // Where each attempt's outcome goes (its AttemptTicket): the states, the breakers, the log.
  FailureLogLines failure_log;
  routing::FirstTokenStats first_tokens;  // streams' first-token times (survive reloads, like `states`)
  routing::RoutingState routing{states, breakers, clock, &failure_log, &first_tokens};
};

}  // namespace smartlb::net
