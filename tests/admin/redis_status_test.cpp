// Scale-out in the admin endpoints: the Redis series of /metrics (valid for promtool) and
// /status's redis object, only when REDIS_URL is set; the password never shown.
#include <gtest/gtest.h>

#include "admin_promtool.hpp"
#include "smartlb/admin/pool_snapshot.hpp"
#include "smartlb/admin/prometheus_families.hpp"
#include "smartlb/admin/status_json.hpp"

namespace smartlb {
namespace redis_status_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(RedisStatus, MetricsAppearOnlyWithRedisAndPassPromtool) {
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  EXPECT_EQ(admin::render_prometheus(metrics.snapshot(), {}).find("smartlb_redis"), std::string::npos);
  metrics.enable_redis();
  metrics.on_redis_state(true);
  metrics.on_redis_error();
  metrics.on_redis_command(0.0003);
  metrics.on_redis_command(0.002);
  metrics.on_replicas_live(3);
  metrics.on_lease(400, 400);
  metrics.on_lease(400, 100);
  metrics.on_lease_failed();
  const std::string text = admin::render_prometheus(metrics.snapshot(), {});
  EXPECT_NE(text.find("\nsmartlb_redis_up 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmartlb_redis_errors_total 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmartlb_replicas_live 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmartlb_quota_lease_asks_total{result=\"full\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmartlb_quota_lease_asks_total{result=\"short\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmartlb_quota_lease_asks_total{result=\"failed\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmartlb_quota_leased_total 500\n"), std::string::npos) << text;
  EXPECT_NE(text.find("smartlb_redis_command_duration_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("smartlb_redis_command_duration_seconds_count 2\n"), std::string::npos) << text;
  const auto check = test::promtool_check_metrics(text);
  ASSERT_TRUE(check.ran) << check.output;
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(RedisStatus, StatusHasARedisObjectOnlyWithRedis) {
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  admin::PoolSnapshot pool;
  EXPECT_FALSE(build_status(metrics.snapshot(), pool).contains("redis"));
  redis::RedisStatus r;
  r.url = config::parse_redis_url("redis://:pw-canary@cache:6379").url->redacted();
  r.replica_id = "node-a";
  r.up = true;
  r.replicas = {{"node-a", "host-a", 1'700'000'000'000, 1'700'000'005'000},
                {"node-b", "host-b", 1'700'000'000'100, 1'700'000'005'100}};
  pool.redis = r;
  const auto doc = build_status(metrics.snapshot(), pool);
  ASSERT_TRUE(doc.contains("redis"));
  const auto& j = doc["redis"];
  EXPECT_EQ(j["url"], "redis://:***@cache:6379");
  EXPECT_EQ(j["up"], true);
  EXPECT_TRUE(j["last_error"].is_null());
  ASSERT_EQ(j["replicas"].size(), 2u);
  EXPECT_EQ(j["replicas"][1]["id"], "node-b");
  EXPECT_EQ(j["replicas"][1]["host"], "host-b");
  EXPECT_EQ(j["replicas"][1]["started_ms"], 1'700'000'000'100);
  EXPECT_EQ(doc.dump().find("pw-canary"), std::string::npos);
}

}  // namespace redis_status_test
}  // namespace smartlb
