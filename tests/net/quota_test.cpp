// Declared quotas: the proxy routes ahead of a backend's 429 instead of discovering it.
#include <gtest/gtest.h>

#include "chat_request.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace {

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

}  // namespace
}  // namespace smartlb::testing
