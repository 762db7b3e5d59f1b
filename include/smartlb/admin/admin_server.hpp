#pragma once
// The admin listener (ADMIN_PORT): /healthz, /readyz, /metrics, /status, the live status
// page at /, and the admin API under /admin/ (admin_api.hpp), behind the admin tokens when they
// are set (admin_access.hpp). Its own io_context on one extra thread; admin traffic is light.
// No Asio or Beast in this header.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "smartlb/net/server.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::admin {

struct AdminOptions {
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 0;                      // 0: an ephemeral port (read it from port())
  const redis::RedisService* redis = nullptr;  // with REDIS_URL: shown in /status
  // How often the status page's charts get a sample (/status "history": the last 90).
  std::chrono::milliseconds sample_interval{10'000};
  config::AdminConfig access{};  // ADMIN_TOKENS, ADMIN_METRICS_OPEN (none: reads open, writes refused)
};

class AdminServer {
 public:
  // `server` and `metrics` must outlive the AdminServer. Readiness is `server` having bound
  // its API listener (port() != 0) and not draining. The admin API changes `server`'s states.
  AdminServer(net::Server& server, const telemetry::Metrics& metrics, AdminOptions opts);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Binds and starts the thread. Throws std::runtime_error when the address cannot be bound.
  void start();
  std::uint16_t port() const;
  // Who may use the port from the next request on (a reload's admin tokens). Thread-safe.
  void set_access(const config::AdminConfig& access);
  // Stops listening, drops open admin connections and joins the thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smartlb::admin
