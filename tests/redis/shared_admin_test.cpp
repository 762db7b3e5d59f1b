// Replicas sharing the admin API's settings through a real redis-server: two in-process proxies
// (each a Server with its own RedisService, SharedAdmin and SharedCooldowns) in front of the same
// mock backends. A change is made on one replica's BackendStates as the admin API makes it.
#include "smartlb/redis/shared_admin.hpp"

#include <gtest/gtest.h>

#include "await_condition.hpp"
#include "cooldown_replica.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/redis/keys.hpp"
#include "smartlb/redis/shared_cooldowns.hpp"

namespace smartlb::testing {
namespace shared_admin_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using redis::SharedAdmin;

MockReply ok(const std::string& who) { return {200, {{"content-type", "application/json"}}, who}; }

// A replica that shares the admin API's settings too.
struct Replica : CooldownReplica {
  using CooldownReplica::CooldownReplica;
  ~Replica() override { disconnect(); }

  bool change(routing::AdminChange::Kind kind, routing::AdminMode mode = routing::AdminMode::Enabled,
              std::optional<std::string> deployment = std::nullopt) {
    routing::AdminChange c;
    c.backend = "primary";
    c.deployment = std::move(deployment);
    c.kind = kind;
    c.mode = mode;
    c.stamp = {"alice (write, sha256:00000000)", 1'700'000'000'000};
    return states().change_admin(c);
  }
  std::string mode_of_primary() {
    const auto v = states().admin_view("primary", std::nullopt);
    return v ? std::string(to_string(v->settings.mode)) : "none";
  }

  std::unique_ptr<SharedAdmin> admin;

 protected:
  void open(const RedisServer& server) override {
    CooldownReplica::open(server);
    admin = std::make_unique<SharedAdmin>(*service, states());
  }
  void close() override { admin.reset(); }
};

// The integer Redis answers `args` with, through `r`'s connection (-1: no answer).
std::int64_t redis_integer(Replica& r, std::vector<std::string> args) {
  auto answer = std::make_shared<std::atomic<std::int64_t>>(-2);
  r.service->command(std::move(args),
                     [answer](redis::RedisResult res) { *answer = res.ok() ? res.value->integer : -1; });
  if (!await_condition([&] { return answer->load() != -2; })) return -1;
  return answer->load();
}

struct SharedAdminTest : ::testing::Test {
  MockBackend primary{[this](const SeenRequest&) {
    if (throttle.load())
      return MockReply{429, {{"retry-after", "60"}}, R"({"error":{"message":"slow down"}})"};
    return ok("primary");
  }};
  MockBackend secondary{[](const SeenRequest&) { return ok("secondary"); }};
  std::atomic<bool> throttle{false};
  RedisServer server;
};

TEST_F(SharedAdminTest, ADrainOnOneReplicaIsSeenByTheOtherAndAnEnableBringsItBack) {
  Replica a("replica-a", primary.url(), secondary.url());
  Replica b("replica-b", primary.url(), secondary.url());
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(await_condition([&] { return a.admin->resyncs() == 1 && b.admin->resyncs() == 1; }));
  ASSERT_EQ(b.post().header("x-smartlb-backend"), "primary");

  ASSERT_TRUE(a.change(routing::AdminChange::Kind::Mode, routing::AdminMode::Drain));
  ASSERT_TRUE(await_condition([&] { return !b.primary_available(); })) << "B learns the drain through Redis";
  EXPECT_EQ(b.mode_of_primary(), "drain");
  EXPECT_EQ(b.states().admin_view("primary", std::nullopt)->settings.mode_set.by,
            "alice (write, sha256:00000000)")
      << "who drained it travels with it";
  const std::size_t before = primary.request_count();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.post().header("x-smartlb-backend"), "secondary");
  EXPECT_EQ(primary.request_count(), before) << "B sends nothing to the backend A drained";
  EXPECT_EQ(b.admin->applied(), 1u);
  EXPECT_EQ(a.admin->applied(), 0u) << "A's own message is not applied back";

  ASSERT_TRUE(a.change(routing::AdminChange::Kind::Mode, routing::AdminMode::Enabled));
  ASSERT_TRUE(await_condition([&] { return b.primary_available(); }));
  EXPECT_EQ(b.post().header("x-smartlb-backend"), "primary");
}

TEST_F(SharedAdminTest, ADrainSurvivesTheOtherReplicasRestartAndReachesOneThatStartsLater) {
  Replica a("replica-a", primary.url(), secondary.url());
  a.connect(server);
  ASSERT_TRUE(await_condition([&] { return a.admin->resyncs() == 1; }));
  ASSERT_TRUE(a.change(routing::AdminChange::Kind::Mode, routing::AdminMode::Disable, std::string("gpt-4o")));
  // Stored before any other replica listens: only the hash can tell B.
  ASSERT_TRUE(await_condition([&] {
    return redis_integer(a, {"HEXISTS", redis::admin_key(a.service->key_prefix()), "primary/gpt-4o"}) == 1;
  }));

  {
    Replica b("replica-b", primary.url(), secondary.url());
    EXPECT_TRUE(b.primary_available());
    b.connect(server);
    EXPECT_TRUE(await_condition([&] { return !b.primary_available(); })) << "read at start";
    EXPECT_EQ(b.post().header("x-smartlb-backend"), "secondary");
  }  // B stops: a restart is a new process with nothing in memory
  Replica b("replica-b", primary.url(), secondary.url());
  b.connect(server);
  EXPECT_TRUE(await_condition([&] { return !b.primary_available(); })) << "and again after a restart";
  const auto v = b.states().admin_view("primary", std::string("gpt-4o"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->settings.mode, routing::AdminMode::Disable);

  ASSERT_TRUE(a.change(routing::AdminChange::Kind::Mode, routing::AdminMode::Enabled, std::string("gpt-4o")));
  EXPECT_TRUE(await_condition([&] { return b.primary_available(); }));
  Replica c("replica-c", primary.url(), secondary.url());
  c.connect(server);
  ASSERT_TRUE(await_condition([&] { return c.admin->resyncs() == 1; }));
  EXPECT_TRUE(c.primary_available()) << "an enabled scope leaves nothing in Redis";
}

TEST_F(SharedAdminTest, ADrainMadeWhileRedisIsAwayReachesTheOthersWhenItIsBack) {
  Replica a("replica-a", primary.url(), secondary.url());
  Replica b("replica-b", primary.url(), secondary.url());
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(await_condition([&] { return a.admin->resyncs() == 1 && b.admin->resyncs() == 1; }));
  server.kill();
  ASSERT_TRUE(await_condition([&] { return !a.service->up() && !b.service->up(); }));
  ASSERT_TRUE(a.change(routing::AdminChange::Kind::Mode, routing::AdminMode::Drain));
  EXPECT_FALSE(a.primary_available()) << "applied here at once";
  EXPECT_TRUE(b.primary_available()) << "B cannot know yet";

  server.start();  // empty: nothing was saved
  ASSERT_TRUE(await_condition([&] { return a.admin->resyncs() == 2 && b.admin->resyncs() == 2; }));
  EXPECT_TRUE(await_condition([&] { return !b.primary_available(); }))
      << "A stores and publishes it when Redis is back, whichever replica reads the hash first";
  EXPECT_FALSE(a.primary_available()) << "A's own read of the hash keeps it";
  EXPECT_EQ(b.mode_of_primary(), "drain");
}

TEST_F(SharedAdminTest, ALiftOnOneReplicaEndsA429sCooldownOnEveryReplicaAndInRedis) {
  Replica a("replica-a", primary.url(), secondary.url());
  Replica b("replica-b", primary.url(), secondary.url());
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(await_condition([&] { return a.admin->resyncs() == 1 && b.admin->resyncs() == 1; }));
  throttle = true;
  EXPECT_EQ(b.post().header("x-smartlb-backend"), "secondary");
  ASSERT_TRUE(await_condition([&] { return !a.primary_available(); })) << "the 429 is shared";
  throttle = false;

  ASSERT_TRUE(a.change(routing::AdminChange::Kind::Lift));
  EXPECT_TRUE(a.primary_available());
  ASSERT_TRUE(await_condition([&] { return b.primary_available(); })) << "B lifts it too";
  EXPECT_EQ(b.post().header("x-smartlb-backend"), "primary");
  // A replica that starts now does not read the lifted cooldown back.
  const std::string key = redis::cooldown_key(a.service->key_prefix(), "primary", "gpt-4o", false);
  ASSERT_TRUE(await_condition([&] { return redis_integer(a, {"EXISTS", key}) == 0; }));
  Replica c("replica-c", primary.url(), secondary.url());
  c.connect(server);
  ASSERT_TRUE(await_condition([&] { return c.admin->resyncs() == 1; }));
  EXPECT_TRUE(c.primary_available());
}

}  // namespace shared_admin_test
}  // namespace smartlb::testing
