// failure_tolerance counted by two replicas together through a real redis-server: neither
// replica alone sees more failures than the target allows, both together do, and the breaker
// trips on both.
#include "smartlb/redis/shared_failures.hpp"

#include <gtest/gtest.h>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/redis/shared_cooldowns.hpp"

namespace smartlb::testing {
namespace shared_failures_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const char* kPolicy = R"(
backends:
  - {name: a, url: "${A_URL}"}
  - {name: b, url: "${B_URL}"}
targets: [{id: a/m, backend: a}, {id: b/m, backend: b}]
rules:
  - id: r
    type: priority-based-routing
    load_balance_targets: [{target: a/m, priority: 1}, {target: b/m, priority: 2}]
model_configs:
  - {model: a/m, failure_tolerance: {allowed_failures_per_minute: 2, cooldown_period_minutes: 30}}
)";

struct Replica {
  Replica(const std::string& id, const config::EnvMap& env, const RedisServer& server) {
    proxy.clock.set_wall_epoch(std::chrono::system_clock::now() - base::Nanos(proxy.clock.now()));
    EXPECT_EQ(proxy.use_config_text(env, kPolicy), "");
    proxy.start();
    service = std::make_unique<redis::RedisService>(proxy.clock, test_redis_options(server.url(), id));
    cooldowns = std::make_unique<redis::SharedCooldowns>(*service, proxy.server->states());
    failures = std::make_unique<redis::SharedFailures>(*service, proxy.server->states(), proxy.clock);
    proxy.server->set_failure_sharer(failures.get());
    service->start();
  }
  ~Replica() {
    service->stop();    // no callback after this
    cooldowns.reset();  // stops listening to the states, which go with the proxy
    proxy.stop();
  }

  std::string post() {
    return http_call(proxy.port(), "POST", "/openai/deployments/m/chat/completions?api-version=1", {}, "{}")
        .body;
  }
  const routing::PoolMember& target_a() const { return proxy.server->snapshot()->rules[0].table.member(0); }
  routing::CooldownView a_cooldown() const {
    return proxy.server->states().deployment_cooldown(target_a(), "m");
  }
  void advance(base::Nanos d) { proxy.clock.advance(d); }

  ProxyHarness proxy;
  std::unique_ptr<redis::RedisService> service;
  std::unique_ptr<redis::SharedCooldowns> cooldowns;
  std::unique_ptr<redis::SharedFailures> failures;
};

TEST(SharedFailures, TheTargetsAllowanceCountsTheFailuresOfAllReplicas) {
  MockBackend a([](const SeenRequest&) { return MockReply{500, {}, "{}"}; });
  MockBackend b([](const SeenRequest&) { return MockReply{200, {}, R"({"from":"b"})"}; });
  RedisServer server;
  const config::EnvMap env{{"A_URL", a.url()}, {"B_URL", b.url()}};
  Replica one("replica-1", env, server), two("replica-2", env, server);
  ASSERT_TRUE(await_condition([&] { return one.service->up() && two.service->up(); }));
  const auto past_the_500s_cooldown = [&] {  // 10 s by default, and shared: both clocks move
    one.advance(11s);
    two.advance(11s);
  };
  // Two failures allowed a minute: one on replica 1, one on replica 2, none trips.
  EXPECT_EQ(one.post(), R"({"from":"b"})");
  past_the_500s_cooldown();
  EXPECT_EQ(two.post(), R"({"from":"b"})");
  past_the_500s_cooldown();
  ASSERT_TRUE(one.proxy.server->states().available(one.target_a(), "m"));
  // The third in the minute, replica 1's second: more than allowed, all replicas together.
  EXPECT_EQ(one.post(), R"({"from":"b"})");
  ASSERT_TRUE(await_condition([&] {
    return one.a_cooldown().cause == routing::FailureCause::FailureTolerance;
  })) << "the shared count trips the breaker on the replica that counted one too many";
  ASSERT_TRUE(await_condition([&] {
    return two.a_cooldown().cause == routing::FailureCause::FailureTolerance;
  })) << "and the other learns it as a shared cooldown";
  EXPECT_GE(two.a_cooldown().until - two.proxy.clock.now(), base::Nanos(29min).count())
      << "its cooldown period";
  EXPECT_EQ(one.failures->trips() + two.failures->trips(), 1u);
  EXPECT_EQ(a.request_count(), 3u);
}

}  // namespace shared_failures_test
}  // namespace smartlb::testing
