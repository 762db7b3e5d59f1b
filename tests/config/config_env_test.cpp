#include "smartlb/config/config_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace smartlb {
namespace config_env_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

bool has_error(const config::ConfigLoadResult& r, std::string_view var) {
  return std::any_of(r.errors.begin(), r.errors.end(),
                     [&](const std::string& e) { return e.rfind(std::string(var) + ":", 0) == 0; });
}

TEST(ConfigEnv, MinimalBackendGetsDefaults) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://east.openai.azure.com"}});
  ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0]);
  const config::Config& c = *r.config;
  ASSERT_EQ(c.backends.size(), 1u);
  const auto& b = c.backends[0];
  EXPECT_EQ(b.name, "backend-1");
  EXPECT_EQ(b.priority, 1);
  EXPECT_EQ(b.weight, 1u);
  EXPECT_TRUE(b.url.tls);
  EXPECT_EQ(b.url.host, "east.openai.azure.com");
  EXPECT_TRUE(b.azure_host);
  EXPECT_EQ(c.port, 8080);
  EXPECT_EQ(c.http_timeout, 100s);
  EXPECT_EQ(c.default_cooldown, 10s);
}

TEST(ConfigEnv, ReadsEveryBackendField) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "http://127.0.0.1:9001/prefix/"},
                                         {"BACKEND_1_PRIORITY", "2"},
                                         {"BACKEND_1_WEIGHT", "300"},
                                         {"BACKEND_1_APIKEY", "k-123"},
                                         {"BACKEND_1_DEPLOYMENT_NAME", "gpt-4o-prod"},
                                         {"BACKEND_1_NAME", "eastus"},
                                         {"BACKEND_1_AUTH", "bearer"},
                                         {"BACKEND_1_RESOURCE", "openai-project-a"}});
  ASSERT_TRUE(r.config);
  const auto& b = r.config->backends[0];
  EXPECT_EQ(b.resource, "openai-project-a");
  EXPECT_EQ(b.priority, 2);
  EXPECT_EQ(b.weight, 300u);
  EXPECT_EQ(b.api_key, "k-123");
  EXPECT_EQ(b.deployment_name, "gpt-4o-prod");
  EXPECT_EQ(b.name, "eastus");
  EXPECT_EQ(b.auth, config::AuthStyle::Bearer);
  EXPECT_EQ(b.url.base_path, "/prefix");
  EXPECT_EQ(b.url.host_header, "127.0.0.1:9001");
  EXPECT_FALSE(b.azure_host);
}

// BACKEND_3_URL=https://api.openai.com/v1 sends /v1/chat/completions to /v1/v1/...: a warning
// naming the variable and the fix, not a refusal.
TEST(ConfigEnv, ABaseUrlThatDoublesTheClientsPrefixIsAWarning) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://east.openai.azure.com"},
                                         {"BACKEND_2_URL", "https://west.openai.azure.com/openai"},
                                         {"BACKEND_3_URL", "https://api.openai.com/v1"}});
  ASSERT_TRUE(r.config);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0].rfind("BACKEND_2_URL: ends in /openai,", 0), 0u) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("drop /openai from BACKEND_2_URL"), std::string::npos) << r.warnings[0];
  EXPECT_EQ(r.warnings[1].rfind("BACKEND_3_URL: ends in /v1,", 0), 0u) << r.warnings[1];
  EXPECT_NE(r.warnings[1].find("drop /v1 from BACKEND_3_URL: smartlb appends the client's path"),
            std::string::npos)
      << r.warnings[1];
}

TEST(ConfigEnv, GapsInNumberingAreAllowedAndOrderIsById) {
  auto r = config::load_config_from_env(
      {{"BACKEND_10_URL", "https://b.example.com"}, {"BACKEND_3_URL", "https://a.example.com"}});
  ASSERT_TRUE(r.config);
  ASSERT_EQ(r.config->backends.size(), 2u);
  EXPECT_EQ(r.config->backends[0].id, 3);
  EXPECT_EQ(r.config->backends[1].id, 10);
}

TEST(ConfigEnv, ReportsEveryErrorAtOnceNamingTheVariable) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "ftp://x"},
                                         {"BACKEND_1_WEIGHT", "0"},
                                         {"BACKEND_2_PRIORITY", "high"},
                                         {"PORT", "70000"},
                                         {"HTTP_TIMEOUT_SECONDS", "-5"},
                                         {"LOG_LEVEL", "loud"}});
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "BACKEND_1_URL"));
  EXPECT_TRUE(has_error(r, "BACKEND_1_WEIGHT"));
  EXPECT_TRUE(has_error(r, "BACKEND_2_PRIORITY"));
  EXPECT_TRUE(has_error(r, "BACKEND_2_URL")) << "a backend with settings but no URL";
  EXPECT_TRUE(has_error(r, "PORT"));
  EXPECT_TRUE(has_error(r, "HTTP_TIMEOUT_SECONDS"));
  EXPECT_TRUE(has_error(r, "LOG_LEVEL"));
  EXPECT_EQ(r.errors.size(), 7u);
}

TEST(ConfigEnv, NoBackendIsAnError) {
  auto r = config::load_config_from_env({{"PORT", "8080"}});
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "BACKEND_1_URL"));
}

TEST(ConfigEnv, MisspelledBackendFieldIsReported) {
  auto r =
      config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}, {"BACKEND_1_APIKY", "x"}});
  EXPECT_TRUE(has_error(r, "BACKEND_1_APIKY"));
}

TEST(ConfigEnv, BadBackendNumberIsReported) {
  auto r = config::load_config_from_env(
      {{"BACKEND_A_URL", "https://a.example.com"}, {"BACKEND_01_URL", "https://b.example.com"}});
  EXPECT_TRUE(has_error(r, "BACKEND_A_URL"));
  EXPECT_TRUE(has_error(r, "BACKEND_01_URL"));
}

TEST(ConfigEnv, KeyNeverAppearsInMessages) {
  const std::string secret = "sk-SECRET-VALUE-1234\n";
  auto r = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://a.example.com"}, {"BACKEND_1_APIKEY", secret}});
  ASSERT_TRUE(has_error(r, "BACKEND_1_APIKEY")) << "a trailing newline is refused";
  for (const auto& e : r.errors) EXPECT_EQ(e.find("SECRET"), std::string::npos) << e;
}

TEST(ConfigEnv, DuplicateNamesAreRefused) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"},
                                         {"BACKEND_1_NAME", "x"},
                                         {"BACKEND_2_URL", "https://b.example.com"},
                                         {"BACKEND_2_NAME", "x"}});
  EXPECT_TRUE(has_error(r, "BACKEND_2_NAME"));
}

TEST(ConfigEnv, GlobalSettings) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"},
                                         {"PORT", "0"},
                                         {"LISTEN_ADDRESS", "127.0.0.1"},
                                         {"ADMIN_PORT", "0"},
                                         {"THREADS", "3"},
                                         {"HTTP_TIMEOUT_SECONDS", "30"},
                                         {"DEFAULT_COOLDOWN_SECONDS", "2.5"},
                                         {"MAX_REQUEST_BODY_BYTES", "1024"},
                                         {"LOG_FORMAT", "json"},
                                         {"ACCESS_LOG", "off"},
                                         {"CLIENT_API_KEYS", "client-key-1, client-key-2"}});
  ASSERT_TRUE(r.config) << r.errors[0];
  const config::Config& c = *r.config;
  EXPECT_EQ(c.port, 0);
  EXPECT_EQ(c.listen_address, "127.0.0.1");
  EXPECT_EQ(c.admin_port, 0);
  EXPECT_EQ(c.threads, 3u);
  EXPECT_EQ(c.http_timeout, 30s);
  EXPECT_EQ(c.default_cooldown, 2500ms);
  EXPECT_EQ(c.max_request_body_bytes, 1024u);
  EXPECT_EQ(c.log_format, "json");
  EXPECT_FALSE(c.access_log);
  EXPECT_EQ(c.client_api_keys, (std::vector<std::string>{"client-key-1", "client-key-2"}));
}

TEST(ConfigEnv, StreamHoldbackBytes_DefaultsTo64KiB_ZeroTurnsItOff) {
  auto d = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}});
  ASSERT_TRUE(d.config) << d.errors[0];
  EXPECT_EQ(d.config->stream_holdback_bytes, 65536u);
  auto off = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://a.example.com"}, {"STREAM_HOLDBACK_BYTES", "0"}});
  ASSERT_TRUE(off.config) << off.errors[0];
  EXPECT_EQ(off.config->stream_holdback_bytes, 0u);
  auto bad = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://a.example.com"}, {"STREAM_HOLDBACK_BYTES", "-1"}});
  EXPECT_TRUE(has_error(bad, "STREAM_HOLDBACK_BYTES"));
}

TEST(ConfigEnv, CapacityGraceMs_DefaultsTo100_ZeroTurnsItOff_AMinuteAtMost) {
  auto d = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}});
  ASSERT_TRUE(d.config) << d.errors[0];
  EXPECT_EQ(d.config->capacity_grace, std::chrono::milliseconds(100));
  auto off =
      config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}, {"CAPACITY_GRACE_MS", "0"}});
  ASSERT_TRUE(off.config) << off.errors[0];
  EXPECT_EQ(off.config->capacity_grace, std::chrono::milliseconds(0));
  for (const char* bad_value : {"-1", "60001", "0.5", "soon"}) {
    auto bad = config::load_config_from_env(
        {{"BACKEND_1_URL", "https://a.example.com"}, {"CAPACITY_GRACE_MS", bad_value}});
    EXPECT_FALSE(bad.config) << bad_value;
    EXPECT_TRUE(has_error(bad, "CAPACITY_GRACE_MS")) << bad_value;
  }
}

TEST(ConfigEnv, StreamedBodyLimits_DefaultTo4MiBAnd512MiB_AndTheLimitIsNotBelowTheThreshold) {
  auto d = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}});
  ASSERT_TRUE(d.config) << d.errors[0];
  EXPECT_EQ(d.config->stream_request_body_bytes, 4u << 20);
  EXPECT_EQ(d.config->max_streamed_body_bytes, 512u << 20);
  auto below = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"},
                                             {"STREAM_REQUEST_BODY_BYTES", "2000"},
                                             {"MAX_STREAMED_BODY_BYTES", "1000"}});
  EXPECT_TRUE(has_error(below, "MAX_STREAMED_BODY_BYTES"));
  auto zero = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://a.example.com"}, {"STREAM_REQUEST_BODY_BYTES", "0"}});
  EXPECT_TRUE(has_error(zero, "STREAM_REQUEST_BODY_BYTES"));
}

TEST(ConfigEnv, AdminPortMustDifferFromPort) {
  auto r = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://a.example.com"}, {"PORT", "9000"}, {"ADMIN_PORT", "9000"}});
  EXPECT_TRUE(has_error(r, "ADMIN_PORT"));
}

}  // namespace config_env_test
}  // namespace smartlb

namespace smartlb {
namespace config_env_test {

TEST(ConfigEnv, DeclaredQuotas) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"},
                                         {"BACKEND_1_TPM", "300000"},
                                         {"BACKEND_1_RPM", "1800"},
                                         {"QUOTA_WINDOW_SECONDS", "10"}});
  ASSERT_TRUE(r.config) << r.errors[0];
  EXPECT_EQ(r.config->backends[0].tpm, 300000);
  EXPECT_EQ(r.config->backends[0].rpm, 1800);
  EXPECT_EQ(r.config->quota_window, std::chrono::seconds(10));
  auto bad =
      config::load_config_from_env({{"BACKEND_1_URL", "https://a.example.com"}, {"BACKEND_1_TPM", "0"}});
  EXPECT_TRUE(has_error(bad, "BACKEND_1_TPM"));
}

}  // namespace config_env_test
}  // namespace smartlb

namespace smartlb {
namespace config_env_test {

TEST(ConfigEnv, UnreadableCaFileIsAConfigurationError) {
  auto r = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://a.example.com"}, {"UPSTREAM_CA_FILE", "/nonexistent/ca.pem"}});
  EXPECT_TRUE(has_error(r, "UPSTREAM_CA_FILE"));
}

}  // namespace config_env_test
}  // namespace smartlb

namespace smartlb {
namespace config_env_test {

TEST(ConfigEnv, ClientLimitsGiveEveryClientABudgetOfItsOwn) {
  auto r = config::load_config_from_env({{"BACKEND_1_URL", "http://127.0.0.1:9"},
                                         {"CLIENT_TOKENS_PER_MINUTE", "10000"},
                                         {"CLIENT_REQUESTS_PER_MINUTE", "60"},
                                         {"CLIENT_TOKENS_PER_DAY", "1000000"},
                                         {"CLIENT_TOKENS_PER_MONTH", "20000000"},
                                         {"CLIENT_MAX_IN_FLIGHT", "8"}});
  ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0]);
  ASSERT_EQ(r.config->policy.subject_limits.size(), 1u);
  const config::SubjectLimit& s = r.config->policy.subject_limits[0];
  EXPECT_EQ(s.subject, "*");
  EXPECT_FALSE(s.shared);
  EXPECT_EQ(s.limits, (config::ClientLimits{.tokens_per_minute = 10000,
                                            .requests_per_minute = 60,
                                            .tokens_per_day = 1000000,
                                            .tokens_per_month = 20000000,
                                            .max_in_flight = 8}));
  auto bad = config::load_config_from_env(
      {{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"CLIENT_TOKENS_PER_MINUTE", "0"}});
  EXPECT_TRUE(has_error(bad, "CLIENT_TOKENS_PER_MINUTE"));
  EXPECT_TRUE(has_error(
      config::load_config_from_env({{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"CLIENT_MAX_IN_FLIGHT", "-1"}}),
      "CLIENT_MAX_IN_FLIGHT"));
}

}  // namespace config_env_test
}  // namespace smartlb
