// Active health probes over real sockets: a backend that fails its probe is passed over before a
// client's request finds it, used anyway when nothing else may serve, and back once a probe
// passes. The prober keeps time on the harness's manual clock (its next probe is due when the
// test moves the clock), its thread on real sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace health_probe_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const std::string kChat = "/openai/deployments/gpt/chat/completions?api-version=2024-10-21";

bool is_probe(const SeenRequest& r) { return r.method == "GET" && r.target.rfind("/v1/models", 0) == 0; }

// A backend whose probe answers `probe_status`, and chat requests 200; counts the chats.
struct ProbedBackend {
  std::atomic<unsigned> probe_status{200};
  std::atomic<int> probes{0}, chats{0};
  MockBackend backend{[this](const SeenRequest& r) {
    if (is_probe(r)) {
      ++probes;
      return MockReply{probe_status.load(), {{"content-type", "application/json"}}, R"({"data":[]})"};
    }
    ++chats;
    return MockReply{200, {{"content-type", "application/json"}}, "{}"};
  }};
};

struct HealthProbe : ::testing::Test {
  ProxyHarness p;
  ProbedBackend a, b;
  void SetUp() override {
    p.probe_health = true;
    p.cfg.health_probe_interval = 1s;
  }
};

TEST_F(HealthProbe, ABackendThatFailsItsProbeGetsNoClientRequestWhileAnotherServes) {
  a.probe_status = 503;
  p.add_backend("a", a.backend.url(), 1);
  p.add_backend("b", b.backend.url(), 2);
  p.start();
  ASSERT_TRUE(await_condition([&] { return p.unhealthy(0); }));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, "{}").header("x-smartlb-backend"), "b");
  EXPECT_EQ(a.chats, 0) << "no client request found it down";
  // It answers its probe again: back in rotation, preferred again.
  a.probe_status = 200;
  const int before = a.probes;
  p.clock.advance(1s);  // the next probe is due
  ASSERT_TRUE(await_condition([&] { return a.probes > before && !p.unhealthy(0); }));
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, "{}").header("x-smartlb-backend"), "a");
  const auto health = p.server->health();
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(health[0].state, net::ProbeReport::State::Up);
}

TEST_F(HealthProbe, AnyAnswerUnder500IsAlive) {
  a.probe_status = 401;  // no credential is sent: an answer is all a probe asks for
  p.add_backend("a", a.backend.url(), 1);
  p.start();
  ASSERT_TRUE(await_condition(
      [&] { return a.probes > 0 && p.server->health()[0].state == net::ProbeReport::State::Up; }));
  EXPECT_FALSE(p.unhealthy(0));
  EXPECT_FALSE(a.backend.last_request().has_header("api-key"));
  EXPECT_FALSE(a.backend.last_request().has_header("authorization"));
}

TEST_F(HealthProbe, WhenEveryBackendFailsItsProbeRequestsAreStillServed) {
  a.probe_status = 500;
  p.add_backend("a", a.backend.url(), 1);
  p.start();
  ASSERT_TRUE(await_condition([&] { return p.unhealthy(0); }));
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, "{}").status, 200u)
      << "a probe can be wrong: the request decides";
  EXPECT_EQ(a.chats, 1);
}

TEST_F(HealthProbe, ABackendWithProbesOffIsNeverAsked) {
  p.add_backend("a", a.backend.url(), 1).health_probe_interval = 0s;
  p.add_backend("b", b.backend.url(), 2);
  p.start();
  ASSERT_TRUE(await_condition([&] { return b.probes > 0; }));
  EXPECT_EQ(a.probes, 0);
  EXPECT_EQ(p.server->health()[0].state, net::ProbeReport::State::Off);
}

}  // namespace health_probe_test
}  // namespace smartlb::testing
