#pragma once
// Runs the real smartlb Server in-process on 127.0.0.1 with a manual clock, for tests.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/config/config_file.hpp"
#include "smartlb/net/server.hpp"

namespace smartlb::testing {

class ProxyHarness {
 public:
  ProxyHarness() {
    cfg.listen_address = "127.0.0.1";
    cfg.port = 0;
    cfg.admin_port = 0;
    cfg.threads = 2;
    cfg.access_log = false;
  }
  ~ProxyHarness() { stop(); }

  config::BackendConfig& add_backend(const std::string& name, const std::string& url, int priority = 1,
                                     std::uint32_t weight = 1, const std::string& api_key = "") {
    auto parsed = config::parse_backend_url(url);
    if (!parsed.url) throw std::invalid_argument(url + ": " + parsed.error);
    config::BackendConfig b;
    b.id = static_cast<int>(cfg.backends.size()) + 1;
    b.name = name;
    b.url = *parsed.url;
    b.priority = priority;
    b.weight = weight;
    b.api_key = api_key;
    cfg.backends.push_back(b);
    return cfg.backends.back();
  }

  // Routes by a config file's text (backends, targets, rules, clients: `env` fills its ${...}),
  // keeping this harness's process settings (listener, threads, access log). The first error
  // when the text is invalid, else "".
  std::string use_config_text(const config::EnvMap& env, const std::string& yaml) {
    auto r = config::load_config_text(env, yaml, "test.yaml");
    if (!r.config) return r.errors.empty() ? "invalid" : r.errors[0];
    const config::Config process = cfg;
    cfg = *r.config;
    cfg.listen_address = process.listen_address;
    cfg.port = process.port;
    cfg.admin_port = process.admin_port;
    cfg.threads = process.threads;
    cfg.access_log = process.access_log;
    return "";
  }

  void start(telemetry::RequestObserver* observer = nullptr, tracing::Tracer* tracer = nullptr) {
    // Health probes would add requests to every backend a test counts: off unless asked for.
    if (!probe_health) cfg.health_probe_interval = std::chrono::seconds(0);
    net::ServerOptions opts;
    opts.clock = &clock;
    opts.seed = 42;
    opts.observer = observer;
    opts.tracer = tracer;
    server = std::make_unique<net::Server>(cfg, opts);
    server->set_probe_sharer(probe_sharer);
    server->start();
  }
  void stop() {
    if (server) {
      server->request_stop();
      server->wait();
      server.reset();
    }
  }
  std::uint16_t port() const { return server->port(); }

  // The runtime state of the backend at `position` in the current configuration.
  bool available(std::size_t position, std::string_view deployment) const {
    const auto snapshot = server->snapshot();
    return server->states().available(snapshot->table.member(position), deployment);
  }
  bool unhealthy(std::size_t position) const {
    return server->states().unhealthy(server->snapshot()->table.member(position).id, clock.now());
  }
  routing::CooldownView backend_cooldown(std::size_t position) const {
    return server->states().backend_cooldown(server->snapshot()->table.member(position).id);
  }

  config::Config cfg;
  bool probe_health = false;                     // keep cfg.health_probe_interval (tests of the probes)
  routing::ProbeSharer* probe_sharer = nullptr;  // replicas taking turns to probe (must outlive stop())
  base::ManualClock clock;
  std::unique_ptr<net::Server> server;
};

}  // namespace smartlb::testing
