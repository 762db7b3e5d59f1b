// Health probes taken in turns by two replicas through a real redis-server: the backend sees
// one probe for both, and both pass it over when that probe fails. Without Redis a replica
// probes on its own.
#include "smartlb/redis/shared_probes.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "await_condition.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "refusing_port.hpp"

namespace smartlb::testing {
namespace shared_probes_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

// A backend whose models list (the probe) answers `probe_status`; counts the probes.
struct ProbedBackend {
  std::atomic<unsigned> probe_status{503};
  std::atomic<int> probes{0};
  MockBackend backend{[this](const SeenRequest& r) {
    if (r.method == "GET" && r.target.rfind("/v1/models", 0) == 0) ++probes;
    return MockReply{probe_status.load(), {{"content-type", "application/json"}}, "{}"};
  }};
};

struct Replica {
  Replica(const std::string& id, const std::string& backend_url, const std::string& redis_url) {
    proxy.clock.set_wall_epoch(std::chrono::system_clock::now() - base::Nanos(proxy.clock.now()));
    proxy.probe_health = true;
    proxy.cfg.health_probe_interval = 60s;  // one turn lasts the whole test
    proxy.add_backend("a", backend_url);
    service = std::make_unique<redis::RedisService>(proxy.clock, test_redis_options(redis_url, id));
    probes = std::make_unique<redis::SharedProbes>(*service);
    proxy.probe_sharer = probes.get();
  }
  void start() { proxy.start(); }
  ~Replica() {
    service->stop();  // no callback after this
    proxy.stop();
  }
  net::ProbeReport report() const { return proxy.server->health().at(0); }

  ProxyHarness proxy;
  std::unique_ptr<redis::RedisService> service;
  std::unique_ptr<redis::SharedProbes> probes;
};

TEST(SharedProbes, TwoReplicasProbeABackendOnceAndBothPassItOver) {
  ProbedBackend a;
  RedisServer server;
  Replica one("replica-1", a.backend.url(), server.url()), two("replica-2", a.backend.url(), server.url());
  one.service->start();
  two.service->start();
  ASSERT_TRUE(await_condition([&] { return one.service->up() && two.service->up(); }));
  one.start();
  two.start();
  // One of them takes the turn and probes; the other read the turn's result, or asks again once
  // the probe must have ended (its timeout after the turn began, on its clock).
  ASSERT_TRUE(await_condition([&] { return one.probes->turns_taken() + two.probes->turns_taken() == 1; }));
  ASSERT_TRUE(await_condition([&] {
    one.proxy.clock.advance(1s);
    two.proxy.clock.advance(1s);
    return one.proxy.unhealthy(0) && two.proxy.unhealthy(0);
  })) << "both pass the backend over";
  EXPECT_EQ(a.probes, 1) << "one probe for both replicas";
  const net::ProbeReport r1 = one.report(), r2 = two.report();
  EXPECT_EQ(r1.state, net::ProbeReport::State::Down);
  EXPECT_EQ(r2.state, net::ProbeReport::State::Down);
  EXPECT_EQ(r1.detail, "HTTP 503");
  EXPECT_EQ(r2.detail, "HTTP 503");
  EXPECT_EQ(r1.probes_sent + r2.probes_sent, 1u);
  EXPECT_EQ(r1.results_read + r2.results_read, 1u);
  const net::ProbeReport& reader = r1.results_read == 1 ? r1 : r2;
  EXPECT_EQ(reader.by, r1.results_read == 1 ? "replica-2" : "replica-1") << "whose probe it was";
  EXPECT_EQ((r1.results_read == 1 ? r2 : r1).by, "") << "its own";
}

TEST(SharedProbes, WithoutRedisAReplicaProbesOnItsOwn) {
  ProbedBackend a;
  a.probe_status = 200;
  RefusingPort nothing;
  Replica alone("replica-1", a.backend.url(), "redis://127.0.0.1:" + std::to_string(nothing.port()));
  alone.service->start();  // not up: every turn is this replica's
  alone.start();
  ASSERT_TRUE(await_condition([&] { return alone.report().state == net::ProbeReport::State::Up; }));
  EXPECT_EQ(a.probes, 1);
  EXPECT_EQ(alone.report().probes_sent, 1u);
}

}  // namespace shared_probes_test
}  // namespace smartlb::testing
