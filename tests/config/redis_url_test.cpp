#include "smartlb/config/redis_url.hpp"

#include <gtest/gtest.h>

#include "smartlb/config/config_env.hpp"

namespace smartlb {
namespace redis_url_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(RedisUrl, HostAlonePortDefaultsTo6379AndDatabaseTo0) {
  auto r = config::parse_redis_url("redis://cache.internal");
  ASSERT_TRUE(r.url) << r.error;
  EXPECT_FALSE(r.url->tls);
  EXPECT_EQ(r.url->host, "cache.internal");
  EXPECT_EQ(r.url->port, 6379);
  EXPECT_EQ(r.url->database, 0);
  EXPECT_TRUE(r.url->user.empty());
  EXPECT_TRUE(r.url->password.empty());
}

TEST(RedisUrl, TlsUserPasswordPortAndDatabase) {
  auto r = config::parse_redis_url("rediss://app:s3cret@mycache.redis.cache.windows.net:6380/2");
  ASSERT_TRUE(r.url) << r.error;
  EXPECT_TRUE(r.url->tls);
  EXPECT_EQ(r.url->user, "app");
  EXPECT_EQ(r.url->password, "s3cret");
  EXPECT_EQ(r.url->host, "mycache.redis.cache.windows.net");
  EXPECT_EQ(r.url->port, 6380);
  EXPECT_EQ(r.url->database, 2);
}

TEST(RedisUrl, PasswordWithoutUserAndPercentEscapes) {
  auto r = config::parse_redis_url("redis://:p%40ss%3Aw%2Fd@127.0.0.1:7000");
  ASSERT_TRUE(r.url) << r.error;
  EXPECT_EQ(r.url->user, "");
  EXPECT_EQ(r.url->password, "p@ss:w/d");
  EXPECT_EQ(r.url->port, 7000);
}

TEST(RedisUrl, AnUnencodedAtInThePasswordEndsAtTheLastAt) {
  auto r = config::parse_redis_url("redis://:a@b@host");
  ASSERT_TRUE(r.url) << r.error;
  EXPECT_EQ(r.url->password, "a@b");
  EXPECT_EQ(r.url->host, "host");
}

TEST(RedisUrl, Ipv6Literal) {
  auto r = config::parse_redis_url("redis://[::1]:6390/1");
  ASSERT_TRUE(r.url) << r.error;
  EXPECT_EQ(r.url->host, "::1");
  EXPECT_EQ(r.url->port, 6390);
  EXPECT_EQ(r.url->database, 1);
  EXPECT_EQ(r.url->redacted(), "redis://[::1]:6390/1");
}

TEST(RedisUrl, RedactedHidesThePassword) {
  auto r = config::parse_redis_url("rediss://app:topsecret@h:6380/3");
  ASSERT_TRUE(r.url);
  EXPECT_EQ(r.url->redacted(), "rediss://app:***@h:6380/3");
}

TEST(RedisUrl, ErrorsNameRedisUrlAndNeverHoldThePassword) {
  for (const char* bad : {"http://h", "redis://", "redis://:topsecret@", "redis://h:0", "redis://h:99999",
                          "redis://h:", "redis://h/x", "redis://h/1?ssl=true", "redis://[::1",
                          "redis://:top%zzsecret@h", "redis://h o"}) {
    auto r = config::parse_redis_url(bad);
    EXPECT_FALSE(r.url) << bad;
    EXPECT_EQ(r.error.rfind("REDIS_URL ", 0), 0u) << r.error;
    EXPECT_EQ(r.error.find("topsecret"), std::string::npos) << r.error;
    EXPECT_EQ(r.error.find("top%zz"), std::string::npos) << r.error;
  }
}

TEST(RedisConfigEnv, UnsetMeansNoSharingAndDefaults) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}});
  ASSERT_TRUE(r.config);
  EXPECT_FALSE(r.config->redis.enabled());
  EXPECT_EQ(r.config->redis.key_prefix, "smartlb:");
  EXPECT_EQ(r.config->redis.timeout.count(), 200);
  EXPECT_FALSE(r.config->redis.replica_id.empty()) << "hostname-pid by default";
}

TEST(RedisConfigEnv, ReadsEveryVariable) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"},
                                         {"REDIS_URL", "redis://:pw@10.0.0.5:6381/4"},
                                         {"REDIS_KEY_PREFIX", "prod:"},
                                         {"REDIS_TIMEOUT_MS", "500"},
                                         {"REPLICA_ID", "node-a"}});
  ASSERT_TRUE(r.config) << r.errors.front();
  ASSERT_TRUE(r.config->redis.enabled());
  EXPECT_EQ(r.config->redis.url->host, "10.0.0.5");
  EXPECT_EQ(r.config->redis.url->database, 4);
  EXPECT_EQ(r.config->redis.key_prefix, "prod:");
  EXPECT_EQ(r.config->redis.timeout.count(), 500);
  EXPECT_EQ(r.config->redis.replica_id, "node-a");
}

TEST(RedisConfigEnv, AMalformedUrlIsAnErrorWithoutThePassword) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"},
                                         {"REDIS_URL", "redis://:hunter2-secret@host:notaport"},
                                         {"REDIS_CA_FILE", "/nonexistent/ca.pem"},
                                         {"REDIS_TIMEOUT_MS", "0"}});
  ASSERT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].rfind("REDIS_URL: ", 0), 0u) << r.errors[0];
  for (const auto& e : r.errors) EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
}

}  // namespace redis_url_test
}  // namespace smartlb
