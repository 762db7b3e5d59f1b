// The smartlb executable with REDIS_URL: a clear start error for a malformed URL or a wrong
// password (the password never printed), and two replicas that list each other in /status
// and /metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "../admin/admin_daemon.hpp"
#include "await_condition.hpp"
#include "child_process.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "redis_server.hpp"

namespace smartlb::testing {
namespace redis_binary_test {  // named, not anonymous: tests/CMakeLists.txt

std::vector<std::string> environment(const MockBackend& backend, const std::string& redis_url,
                                     const std::string& replica) {
  return {"BACKEND_1_URL=" + backend.url(),
          "PORT=0",
          "ADMIN_PORT=0",
          "LISTEN_ADDRESS=127.0.0.1",
          "THREADS=1",
          "REDIS_URL=" + redis_url,
          "REPLICA_ID=" + replica,
          "HEALTH_PROBE_SECONDS=0"};
}

TEST(RedisBinary, AMalformedRedisUrlIsAStartErrorWithoutThePassword) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ChildProcess c(SMARTLB_BINARY, {}, environment(backend, "redis://:sw0rdfish@host:port", "r"));
  EXPECT_EQ(c.wait_exit(), 2);
  EXPECT_NE(c.output().find("REDIS_URL"), std::string::npos) << c.output();
  EXPECT_EQ(c.output().find("sw0rdfish"), std::string::npos) << c.output();
}

TEST(RedisBinary, AWrongPasswordIsAStartErrorWithoutThePassword) {
  RedisServer server(RedisServerOptions{.password = "correct-horse"});
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ChildProcess c(SMARTLB_BINARY, {}, environment(backend, server.url("battery-staple"), "r"));
  EXPECT_EQ(c.wait_exit(), 1);
  EXPECT_NE(c.output().find("REDIS_URL: Redis refused the credentials"), std::string::npos) << c.output();
  EXPECT_EQ(c.output().find("battery-staple"), std::string::npos) << c.output();
  EXPECT_EQ(c.output().find("correct-horse"), std::string::npos) << c.output();
}

TEST(RedisBinary, UnreachableRedisAtStartStillServes) {
  RedisServer server;
  server.kill();
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ChildProcess c(SMARTLB_BINARY, {}, environment(backend, server.url(), "r"));
  const std::string port = c.await_match(std::regex(R"(listening on 127\.0\.0\.1:(\d+))"));
  ASSERT_FALSE(port.empty()) << c.output();
  EXPECT_EQ(
      http_call(static_cast<std::uint16_t>(std::stoi(port)), "POST", "/v1/chat/completions", {}, "{}").status,
      200u);
  EXPECT_NE(c.output().find("serving on local state"), std::string::npos) << c.output();
}

// The environment with a fixed admin port (ADMIN_PORT=0 turns the admin listener off).
std::function<std::vector<std::string>(std::uint16_t)> with_admin(std::vector<std::string> env) {
  return [env](std::uint16_t admin) {
    auto e = env;
    for (auto& v : e)
      if (v == "ADMIN_PORT=0") v = "ADMIN_PORT=" + std::to_string(admin);
    return e;
  };
}

TEST(RedisBinary, TwoReplicasListEachOtherInStatusAndMetrics) {
  RedisServer server(RedisServerOptions{.password = "s3cr3t-pw"});
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  AdminDaemon a = start_with_admin_port(with_admin(environment(backend, server.url(), "replica-a")));
  AdminDaemon b = start_with_admin_port(with_admin(environment(backend, server.url(), "replica-b")));
  ASSERT_NE(a.api_port, 0) << a.child->output();
  ASSERT_NE(b.api_port, 0) << b.child->output();
  nlohmann::json redis;
  ASSERT_TRUE(await_condition([&] {
    redis = nlohmann::json::parse(http_call(a.admin_port, "GET", "/status").body)["redis"];
    return redis.is_object() && redis["replicas"].size() == 2;
  })) << redis.dump();
  EXPECT_EQ(redis["up"], true);
  EXPECT_EQ(redis["replica_id"], "replica-a");
  EXPECT_EQ(redis["url"], "redis://:***@127.0.0.1:" + std::to_string(server.port()));
  std::set<std::string> ids;
  for (const auto& r : redis["replicas"]) ids.insert(r["id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{"replica-a", "replica-b"}));
  std::string metrics;
  EXPECT_TRUE(await_condition([&] {
    metrics = http_call(a.admin_port, "GET", "/metrics").body;
    return metrics.find("\nsmartlb_replicas_live 2\n") != std::string::npos;
  })) << metrics;
  EXPECT_NE(metrics.find("\nsmartlb_redis_up 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("smartlb_redis_command_duration_seconds_count"), std::string::npos);
  EXPECT_NE(metrics.find("smartlb_redis_errors_total"), std::string::npos);
  EXPECT_NE(http_call(a.admin_port, "GET", "/").body.find("redisSection"), std::string::npos);
  for (const AdminDaemon* d : {&a, &b})
    EXPECT_EQ(d->child->output().find("s3cr3t-pw"), std::string::npos) << d->child->output();
}

TEST(RedisBinary, WithoutRedisUrlNoRedisSeriesOrStatus) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  AdminDaemon d = start_with_admin_port(with_admin(
      {"BACKEND_1_URL=" + backend.url(), "PORT=0", "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1", "THREADS=1"}));
  ASSERT_NE(d.api_port, 0) << d.child->output();
  EXPECT_FALSE(nlohmann::json::parse(http_call(d.admin_port, "GET", "/status").body).contains("redis"));
  EXPECT_EQ(http_call(d.admin_port, "GET", "/metrics").body.find("smartlb_redis"), std::string::npos);
}

}  // namespace redis_binary_test
}  // namespace smartlb::testing
