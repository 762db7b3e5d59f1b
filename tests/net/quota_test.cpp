// Declared quotas: the proxy routes ahead of a backend's 429 instead of discovering it.
#include <gtest/gtest.h>

#include "chat_request.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace quota_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(Quota, BackendAtDeclaredQuotaIsSkippedWithoutAnUpstream429) {
  MockBackend primary([](const SeenRequest&) { return MockReply{200, {}, "primary"}; });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.cfg.quota_window = 60s;
  p.add_backend("primary", primary.url(), 1).tpm = 500;  // room for two requests a minute
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  for (int i = 0; i < 2; ++i) EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary");
  EXPECT_EQ(primary.request_count(), 2u) << "the third request never reached the full primary";

  p.clock.advance(61s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary") << "room again a window later";
}

TEST(Quota, EveryBackendAtQuotaAnswers429WithoutTouchingThem) {
  MockBackend only([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ProxyHarness p;
  p.cfg.quota_window = 10s;
  p.add_backend("only", only.url()).rpm = 6;  // one request per 10 s window
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  auto r = http_call(p.port(), "POST", kChat, {}, kBody);
  EXPECT_EQ(r.status, 429u);
  EXPECT_FALSE(r.header("retry-after-ms").empty());
  const int wait_ms = std::stoi(r.header("retry-after-ms"));
  EXPECT_GT(wait_ms, 0);
  EXPECT_LE(wait_ms, 10'200);
  EXPECT_EQ(only.request_count(), 1u);
  p.clock.advance(std::chrono::milliseconds(wait_ms));
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u) << "admitted when promised";
}

TEST(Quota, AReloadThatRaisesALimit_AppliesAtOnce) {
  MockBackend only([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ProxyHarness p;
  p.cfg.quota_window = 60s;
  p.add_backend("only", only.url()).rpm = 5;
  p.start();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u);
  config::Config next = p.cfg;
  next.backends[0].rpm = 8;
  p.server->reload(next);
  for (int i = 6; i <= 8; ++i) EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u) << i;
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u) << "8 a minute, and 8 were used";
  EXPECT_EQ(only.request_count(), 8u);
}

TEST(Quota, AReloadThatMovesAModelLimitToItsBackend_TakesTheNewLimit) {
  MockBackend only([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ProxyHarness p;
  const config::EnvMap env = {{"URL", only.url()}};
  ASSERT_EQ(p.use_config_text(env, R"(
backends:
  - name: east
    url: ${URL}
targets:
  - id: east-gpt
    backend: east
    deployment: gpt-4o
model_configs:
  - model: east-gpt
    usage_limits:
      requests_per_minute: 2
rules:
  - id: all
    type: priority-based-routing
    when: {models: [gpt-4o]}
    load_balance_targets:
      - target: east-gpt
)"),
            "");
  p.start();
  for (int i = 0; i < 2; ++i) ASSERT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u);
  auto next = config::load_config_text(env, R"(
backends:
  - name: east
    url: ${URL}
    rpm: 5
targets:
  - id: east-gpt
    backend: east
    deployment: gpt-4o
rules:
  - id: all
    type: priority-based-routing
    when: {models: [gpt-4o]}
    load_balance_targets:
      - target: east-gpt
)",
                                       "test.yaml");
  ASSERT_TRUE(next.config) << (next.errors.empty() ? "" : next.errors[0]);
  config::Config cfg = *next.config;
  cfg.listen_address = p.cfg.listen_address;
  cfg.port = p.cfg.port;
  cfg.threads = p.cfg.threads;
  cfg.access_log = false;
  p.server->reload(cfg);
  for (int i = 3; i <= 5; ++i) EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u) << i;
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u) << "5 a minute now";
}

}  // namespace quota_test
}  // namespace smartlb::testing
