#pragma once
// The proxy daemon: API listener, worker threads, graceful drain. No Asio or Beast in this
// header (nor in snapshot.hpp), so including it is cheap.
#include <cstdint>
#include <memory>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/net/health_prober.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/latency_stats.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::routing {
class FailureSharer;  // routing/failure_breakers.hpp
}
namespace smartlb::tracing {
class Tracer;  // tracing/tracer.hpp
}

namespace smartlb::net {

struct ServerOptions {
  const base::Clock* clock = nullptr;  // null: the system clock. Tests pass a ManualClock.
  std::uint64_t seed = 0;              // 0: seeded from std::random_device
  telemetry::RequestObserver* observer = nullptr;
  tracing::Tracer* tracer = nullptr;  // null: tracing off (no trace fields, no spans)
};

class Server {
 public:
  explicit Server(config::Config cfg, ServerOptions opts = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the API listener and starts the worker threads. Throws std::runtime_error with a
  // clear message when the address cannot be bound.
  void start();
  std::uint16_t port() const;

  // Begins a graceful stop: stop accepting, let in-flight requests (streams included)
  // finish up to SHUTDOWN_TIMEOUT_SECONDS, then stop. Thread-safe, returns at once.
  void request_stop();
  bool draining() const;
  // Blocks until every worker thread has ended.
  void wait();

  const config::Config& config() const;  // as started (process settings, and the first backends)
  // Routes with `cfg`'s backends, rules and clients from the next request on; requests in flight
  // finish with the configuration they started with. Process settings (listeners, timeouts,
  // threads) stay as started. Cooldowns, quota windows, latency statistics, pooled connections
  // and what an operator set (drain, disable, held cooldowns) of backends that remain are kept;
  // a removed backend's admin settings are dropped. Call from one thread at a time.
  void reload(const config::Config& cfg);
  // Backend names by BackendId (every backend any configuration had), for metrics.
  std::vector<std::string> backend_names() const;
  // The current configuration's snapshot (backends, routing table), and the backends'
  // runtime state (cooldowns, quota windows), which outlives snapshots.
  std::shared_ptr<const net::Snapshot> snapshot() const;
  const routing::BackendStates& states() const;
  routing::BackendStates&
  states();  // for what shares the states with other replicas (redis/shared_cooldowns)
  const routing::LatencyStats& latency() const;  // latency rules' statistics (outlive snapshots)
  // The client budgets (outlive snapshots), for status pages.
  const clients::BudgetRegistry& budgets() const;
  clients::BudgetRegistry& budgets();  // for what shares them with other replicas (redis/shared_quotas)
  // failure_tolerance counts shared with other replicas (redis/shared_failures): before start().
  void set_failure_sharer(routing::FailureSharer* sharer);
  // Health probes taken in turns with other replicas (redis/shared_probes): before start().
  void set_probe_sharer(routing::ProbeSharer* sharer);
  std::size_t open_connections() const;
  // The Entra ID credentials of the backends: source, state, expiry (never a token).
  std::vector<credentials::entra::CredentialStatus> credentials() const;
  // Each backend's health probe: its state and last answer (HEALTH_PROBE_SECONDS).
  std::vector<net::ProbeReport> health() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smartlb::net
