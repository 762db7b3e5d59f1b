// Replicas sharing cooldowns through a real redis-server: two in-process proxies (each a
// Server with its own RedisService and SharedCooldowns) in front of the same mock backends.
#include "smartlb/redis/shared_cooldowns.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "await_condition.hpp"
#include "continuous_traffic.hpp"
#include "cooldown_replica.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/redis/keys.hpp"

namespace smartlb::testing {
namespace shared_cooldowns_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

MockReply ok(const std::string& who) { return {200, {{"content-type", "application/json"}}, who}; }

using Replica = CooldownReplica;

struct SharedCooldownsTest : ::testing::Test {
  MockBackend primary{[this](const SeenRequest&) {
    if (throttle.load())
      return MockReply{429, {{"retry-after", "30"}}, R"({"error":{"message":"slow down"}})"};
    return ok("primary");
  }};
  MockBackend secondary{[](const SeenRequest&) { return ok("secondary"); }};
  std::atomic<bool> throttle{false};
  RedisServer server;
};

TEST_F(SharedCooldownsTest, A429SeenByOneReplicaStopsTheOtherFromSendingThere) {
  Replica a("replica-a", primary.url(), secondary.url());
  Replica b("replica-b", primary.url(), secondary.url());
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(a.service->up() && b.service->up());

  throttle = true;
  EXPECT_EQ(a.post().header("x-smartlb-backend"), "secondary") << "A meets the 429 and fails over";
  EXPECT_EQ(primary.request_count(), 1u);
  EXPECT_FALSE(a.primary_available());
  ASSERT_TRUE(await_condition([&] { return !b.primary_available(); })) << "B learns it through Redis";
  EXPECT_EQ(b.proxy.server->states()
                .deployment_cooldown(b.proxy.server->snapshot()->table.member(0), "gpt-4o")
                .cause,
            routing::FailureCause::Throttled);

  throttle = false;  // were B to send there, it would be served: it must not
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.post().header("x-smartlb-backend"), "secondary");
  EXPECT_EQ(primary.request_count(), 1u) << "B never sent to the backend A saw throttled";
  EXPECT_EQ(b.cooldowns->applied(), 1u);
  EXPECT_EQ(a.cooldowns->applied(), 0u) << "A's own message is not applied back (no echo)";
  EXPECT_EQ(a.cooldowns->published(), 1u);

  // The cooldown ends on B when it ends on A (30 s), whatever B's clock says.
  b.proxy.clock.advance(29s);
  EXPECT_FALSE(b.primary_available());
  b.proxy.clock.advance(1s);
  EXPECT_TRUE(b.primary_available());
}

TEST_F(SharedCooldownsTest, AReplicaThatConnectsLaterReadsTheCooldownsStillRunning) {
  Replica a("replica-a", primary.url(), secondary.url());
  a.connect(server);
  throttle = true;
  EXPECT_EQ(a.post().header("x-smartlb-backend"), "secondary");
  // The key holds the deadline until it passes.
  ASSERT_TRUE(await_condition([&] { return a.cooldowns->published() == 1; }));

  Replica b("replica-b", primary.url(), secondary.url());
  EXPECT_TRUE(b.primary_available());
  b.connect(server);  // resync on connection
  EXPECT_TRUE(await_condition([&] { return !b.primary_available(); }));
}

TEST_F(SharedCooldownsTest,
       RedisKilledMidTestLosesNoRequestAndACooldownSeenMeanwhileReachesTheOtherAfterRestart) {
  Replica a("replica-a", primary.url(), secondary.url());
  Replica b("replica-b", primary.url(), secondary.url());
  a.connect(server);
  b.connect(server);

  // Traffic through both replicas while Redis dies, and on after it.
  ContinuousTraffic traffic_a(a.proxy.port(), kReplicaChat), traffic_b(b.proxy.port(), kReplicaChat);
  ASSERT_TRUE(traffic_a.await_sent(20) && traffic_b.await_sent(20));
  server.kill();
  ASSERT_TRUE(await_condition([&] { return !a.service->up() && !b.service->up(); }));
  const int sent_a = traffic_a.sent(), sent_b = traffic_b.sent();
  ASSERT_TRUE(traffic_a.await_sent(sent_a + 20) && traffic_b.await_sent(sent_b + 20));
  traffic_a.stop();
  traffic_b.stop();
  EXPECT_EQ(traffic_a.failed(), 0) << "of " << traffic_a.sent();
  EXPECT_EQ(traffic_b.failed(), 0) << "of " << traffic_b.sent();
  throttle = true;
  EXPECT_EQ(a.post().status, 200u) << "a 429 while Redis is away: local failover as ever";
  EXPECT_FALSE(a.primary_available());
  EXPECT_TRUE(b.primary_available()) << "B cannot know yet";

  server.start();  // empty: nothing was saved
  ASSERT_TRUE(await_condition([&] { return a.service->up() && b.service->up(); }));
  EXPECT_TRUE(await_condition([&] { return !b.primary_available(); }))
      << "A publishes what it saw while Redis was away";
}

TEST_F(SharedCooldownsTest, AWholeBackendCooldownIsSharedToo) {
  Replica a("replica-a", primary.url(), secondary.url());
  Replica b("replica-b", primary.url(), secondary.url());
  a.connect(server);
  b.connect(server);
  const routing::PoolMember m = a.proxy.server->snapshot()->table.member(0);
  a.proxy.server->states().record_failure(m, "gpt-4o", judge_transport(routing::TransportFailure::Connect),
                                          std::nullopt);
  const routing::BackendId b_primary = b.proxy.server->snapshot()->table.member(0).id;
  EXPECT_TRUE(await_condition([&] {
    return b.proxy.server->states().backend_cooldown(b_primary).cause == routing::FailureCause::ConnectFailed;
  }));
  EXPECT_FALSE(b.proxy.available(0, "any-deployment"));
}

}  // namespace shared_cooldowns_test
}  // namespace smartlb::testing
