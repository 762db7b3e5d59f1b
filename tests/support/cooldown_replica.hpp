#pragma once
// One smartlb replica for the Redis tests: an in-process proxy (manual clock, its wall clock set
// to now, as Redis's key expiry reads real time) in front of a "primary" (priority 1) and a
// "secondary" (priority 2) backend, its cooldowns shared through a real redis-server. Tests that
// share more (the admin API's settings) add theirs between open() and start().
#include <memory>
#include <string>

#include "http_client.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/redis/shared_cooldowns.hpp"

namespace smartlb::testing {

inline const std::string kReplicaChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
inline const std::string kReplicaBody = R"({"messages":[{"role":"user","content":"hi"}]})";

struct CooldownReplica {
  CooldownReplica(const std::string& id, const std::string& primary_url, const std::string& secondary_url)
      : id(id) {
    proxy.clock.set_wall_epoch(std::chrono::system_clock::now() - base::Nanos(proxy.clock.now()));
    proxy.add_backend("primary", primary_url, 1);
    proxy.add_backend("secondary", secondary_url, 2);
    proxy.start();
  }
  virtual ~CooldownReplica() { disconnect(); }
  CooldownReplica(const CooldownReplica&) = delete;
  CooldownReplica& operator=(const CooldownReplica&) = delete;

  void connect(const RedisServer& server) {
    open(server);
    service->start();
  }
  void disconnect() {
    if (service) service->stop();  // no callback after this
    close();
    cooldowns.reset();
    service.reset();
  }

  routing::BackendStates& states() { return proxy.server->states(); }
  HttpResponse post() {
    return http_call(proxy.port(), "POST", kReplicaChat, {{"content-type", "application/json"}},
                     kReplicaBody);
  }
  bool primary_available() const { return proxy.available(0, "gpt-4o"); }

  std::string id;
  ProxyHarness proxy;
  std::unique_ptr<redis::RedisService> service;
  std::unique_ptr<redis::SharedCooldowns> cooldowns;

 protected:
  // The service and what shares through it, before the service starts.
  virtual void open(const RedisServer& server) {
    service = std::make_unique<redis::RedisService>(proxy.clock, test_redis_options(server.url(), id));
    cooldowns = std::make_unique<redis::SharedCooldowns>(*service, states());
  }
  // What open() added beyond the cooldowns, released once the service stopped.
  virtual void close() {}
};

}  // namespace smartlb::testing
