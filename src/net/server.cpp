#include "smartlb/net/server.hpp"

#include <unistd.h>

#include <random>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "smartlb/config/cpu_limit.hpp"
#include "smartlb/net/client_session.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/telemetry/logging.hpp"

namespace smartlb::net {

net::Worker::Worker(Shared& s, std::size_t idx, std::uint64_t seed)
    : shared(s),
      index(idx),
      upstreams(sweeper, s.cfg, s.tls, s.clock, s.observer),
      snapshots(s.published),
      rng(seed),
      access_log(s.access_log_writer ? make_access_logger(*s.access_log_writer) : nullptr) {}

net::Worker::~Worker() {
  // Destroy pending coroutine frames first: they refer to the members below.
  ioc.shutdown();
}

void net::Worker::begin_drain() {
  draining = true;
  error_code ignored;
  if (acceptor) acceptor->close(ignored);
  for (SessionEntry* e : sessions)
    if (e->idle) e->stream->socket().cancel(ignored);
  // A listener may leave the list while told (its session ends): tell a copy.
  const std::vector<DrainListener*> listeners(drain_listeners.begin(), drain_listeners.end());
  for (DrainListener* l : listeners) l->on_drain();
}

namespace {

Task<> accept_loop(Worker& w) {
  for (;;) {
    auto [ec, socket] = co_await w.acceptor->async_accept(use_tuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || !w.acceptor->is_open()) co_return;
      if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space) {
        // Out of file descriptors: back off briefly instead of spinning.
        spdlog::warn("accept failed: {}; pausing accepts for 100 ms", ec.message());
        asio::steady_timer t(w.ioc, std::chrono::milliseconds(100));
        co_await t.async_wait(use_tuple);
      }
      continue;
    }
    if (w.shared.connections.load(std::memory_order_relaxed) >= w.shared.cfg.max_connections) {
      error_code ignored;
      socket.close(ignored);  // over MAX_CONNECTIONS: refuse rather than degrade everyone
      continue;
    }
    asio::co_spawn(w.ioc, run_client_session(w, std::move(socket)), log_session_exception);
  }
}

credentials::entra::CredentialServiceOptions credential_options(telemetry::RequestObserver* observer) {
  credentials::entra::CredentialServiceOptions o;
  if (observer)
    o.on_refresh = [observer](const std::string& backend, bool ok) {
      observer->on_credential_refresh(backend, ok);
    };
  return o;
}

}  // namespace

struct Server::Impl {
  Impl(config::Config c, ServerOptions o)
      : cfg(std::move(c)),
        opts(o),
        clock(o.clock ? o.clock : &system_clock),
        states(*clock, routing::CooldownPolicy{cfg.default_cooldown, cfg.min_cooldown, cfg.max_cooldown}),
        tls(make_upstream_tls_context(cfg)),
        credentials(*clock, *tls, credential_options(o.observer)),
        key_sets(*tls),
        published(make_snapshot(cfg, ids, &latency, &credentials, &budgets, &key_sets)),
        shared(cfg, published, states, latency, *clock, *tls, o.observer),
        prober(cfg, published, states, *clock, *tls) {
    shared.tracer = o.tracer;
    if (cfg.access_log) {
      access_log_writer = std::make_unique<telemetry::AccessLogWriter>(STDOUT_FILENO);
      shared.access_log_writer = access_log_writer.get();
    }
    states.set_route_on_remaining(cfg.route_on_remaining);
    states.track(published.current()->table);
  }

  config::Config cfg;
  ServerOptions opts;
  base::SystemClock system_clock;
  const base::Clock* clock;
  routing::BackendIds ids;
  routing::BackendStates states;
  routing::LatencyStats latency;
  std::unique_ptr<ssl::context> tls;
  credentials::entra::CredentialService credentials;  // Entra ID tokens, refreshed on a thread of its own
  clients::BudgetRegistry budgets;                    // client budgets (survive reloads, like `states`)
  clients::jwt::KeySetService key_sets;  // the signing keys of the clients' token issuers, likewise
  base::Published<Snapshot> published;
  std::unique_ptr<telemetry::AccessLogWriter> access_log_writer;  // outlives the workers (declared before)
  Shared shared;
  HealthProber prober;  // each backend's health probe, on a thread of its own
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  std::optional<asio::steady_timer> drain_timer;

  void stop_all() {
    for (auto& w : workers) w->ioc.stop();
  }
};

Server::Server(config::Config cfg, ServerOptions opts)
    : impl_(std::make_unique<Impl>(std::move(cfg), opts)) {}

Server::~Server() {
  if (!impl_->threads.empty()) {
    request_stop();
    wait();
  }
  impl_->shared.on_drained = nullptr;  // workers are about to go; nothing to tell them
}

void Server::start() {
  auto& I = *impl_;
  // THREADS, or the CPUs this process may use (affinity mask, cgroup CPU quota).
  const config::WorkerCount count = config::worker_count(I.cfg.threads);
  const unsigned n = count.threads;
  spdlog::info("{} worker thread(s), from {}", n, count.source);
  std::uint64_t seed =
      I.opts.seed ? I.opts.seed : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  error_code ec;
  const auto address = asio::ip::make_address(I.cfg.listen_address, ec);
  if (ec) throw std::runtime_error("LISTEN_ADDRESS: not an IP address: " + I.cfg.listen_address);
  std::uint16_t port = I.cfg.port;
  if (port != 0) {
    // SO_REUSEPORT would let a second smartlb (same user) share the port and split the
    // traffic silently. A plain bind first fails if anything already listens there.
    asio::io_context probe_ctx;
    tcp::acceptor probe(probe_ctx);
    const tcp::endpoint ep(address, port);
    probe.open(ep.protocol(), ec);
    if (!ec) probe.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) probe.bind(ep, ec);
    if (ec)
      throw std::runtime_error("cannot listen on " + I.cfg.listen_address + ":" + std::to_string(port) +
                               ": " + ec.message());
  }
  for (unsigned i = 0; i < n; ++i) {
    auto w = std::make_unique<Worker>(I.shared, i, seed + i * 0x9e3779b97f4a7c15ull);
    // One acceptor per worker on the same port (SO_REUSEPORT): the kernel spreads new
    // connections over the threads and no accept is ever handed between threads.
    io::Acceptor& a = w->acceptor.emplace(w->ioc.get_executor());
    const tcp::endpoint ep(address, port);
    a.open(ep.protocol(), ec);
    if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) a.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
    if (!ec) a.bind(ep, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      throw std::runtime_error("cannot listen on " + I.cfg.listen_address + ":" + std::to_string(port) +
                               ": " + ec.message());
    if (port == 0) port = a.local_endpoint().port();
    I.workers.push_back(std::move(w));
  }
  I.port = port;
  I.credentials.start();  // first tokens fetched at once; requests wait for them, not for this
  I.key_sets.start();     // likewise the keys that clients' tokens are verified with
  I.prober.start();
  I.shared.on_drained = [this] {
    auto& W0 = *impl_->workers.front();
    asio::post(W0.ioc, [this] {
      if (impl_->drain_timer) impl_->drain_timer->cancel();
    });
  };
  for (auto& w : I.workers) {
    asio::co_spawn(w->ioc, accept_loop(*w), log_session_exception);
    I.threads.emplace_back([&ioc = w->ioc] { ioc.run(); });
  }
}

std::uint16_t Server::port() const { return impl_->port; }

void Server::request_stop() {
  auto& I = *impl_;
  if (I.workers.empty() || I.shared.draining.exchange(true)) return;
  auto& W0 = *I.workers.front();
  asio::post(W0.ioc, [this] {
    auto& I = *impl_;
    if (I.shared.connections.load() == 0) return;
    I.drain_timer.emplace(I.workers.front()->ioc, I.cfg.shutdown_timeout);
    I.drain_timer->async_wait([this](error_code ec) {
      if (ec) return;  // cancelled: everything finished in time
      spdlog::warn("drain deadline reached with {} connection(s) open; closing them",
                   impl_->shared.connections.load());
      impl_->stop_all();
    });
  });
  for (auto& w : I.workers) asio::post(w->ioc, [wp = w.get()] { wp->begin_drain(); });
}

bool Server::draining() const { return impl_->shared.draining.load(); }

void Server::wait() {
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
  impl_->threads.clear();
  impl_->credentials.stop();
  impl_->key_sets.stop();
  impl_->prober.stop();
  // Every request has ended: its line is written before wait() returns (SIGTERM's last step).
  if (impl_->access_log_writer) impl_->access_log_writer->stop();
}

std::vector<net::ProbeReport> Server::health() const { return impl_->prober.reports(); }

const config::Config& Server::config() const { return impl_->cfg; }
std::shared_ptr<const net::Snapshot> Server::snapshot() const { return impl_->published.current(); }

void Server::reload(const config::Config& cfg) {
  auto snapshot =
      make_snapshot(cfg, impl_->ids, &impl_->latency, &impl_->credentials, &impl_->budgets, &impl_->key_sets);
  impl_->states.track(snapshot->table);
  impl_->states.forget_removed(snapshot->table);  // a removed backend's admin settings go with it
  impl_->published.publish(std::move(snapshot));
}

const routing::LatencyStats& Server::latency() const { return impl_->latency; }
const clients::BudgetRegistry& Server::budgets() const { return impl_->budgets; }
clients::BudgetRegistry& Server::budgets() { return impl_->budgets; }
void Server::set_failure_sharer(routing::FailureSharer* sharer) { impl_->shared.breakers.set_sharer(sharer); }
void Server::set_probe_sharer(routing::ProbeSharer* sharer) { impl_->prober.set_sharer(sharer); }

std::vector<std::string> Server::backend_names() const { return impl_->ids.names(); }
const routing::BackendStates& Server::states() const { return impl_->states; }
routing::BackendStates& Server::states() { return impl_->states; }
std::size_t Server::open_connections() const { return impl_->shared.connections.load(); }
std::vector<credentials::entra::CredentialStatus> Server::credentials() const {
  return impl_->credentials.status();
}

}  // namespace smartlb::net
