// An Entra ID token, the client secret and the identity header never appear in logs, /status
// or /metrics, while /status shows each credential's source, state and expiry and /metrics
// counts its refreshes. Runs the real binary, configured from the environment, against a mock
// token endpoint (client secret) and a failing App Service identity endpoint.
#include <gtest/gtest.h>

#include <memory>
#include <regex>

#include <nlohmann/json.hpp>

#include "admin_daemon.hpp"
#include "child_process.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"

namespace smartlb {
namespace entra_leak_test {  // named, not anonymous: tests/CMakeLists.txt

using smartlb::testing::ChildProcess;
using smartlb::testing::http_call;
using smartlb::testing::inherited_environment;
using smartlb::testing::MockBackend;
using smartlb::testing::MockReply;
using smartlb::testing::SeenRequest;

const std::string kToken = "eyJleakcanary.token-7c41d9a2e6b3f805";
const std::string kSecret = "secret-leakcanary-0b9e4d7a21c6f358";
const std::string kIdentityHeader = "header-leakcanary-a5d8c2e7f1b04963";

void expect_no_secret(const std::string& where, const std::string& text) {
  for (const std::string& s : {kToken, kSecret, kIdentityHeader, std::string("leakcanary")})
    EXPECT_EQ(text.find(s), std::string::npos) << "'" << s << "' found in " << where;
}

TEST(EntraLeak, TokensAndSecretsNeverAppearInLogsStatusOrMetrics) {
  MockBackend token_endpoint([](const SeenRequest&) {
    return MockReply{200,
                     {{"Content-Type", "application/json"}},
                     R"({"token_type":"Bearer","expires_in":3599,"access_token":")" + kToken + R"("})"};
  });
  MockBackend identity_endpoint([](const SeenRequest&) {
    return MockReply{
        500, {{"Content-Type", "application/json"}}, R"({"statusCode":500,"message":"MSI is down"})"};
  });
  MockBackend backend([](const SeenRequest& r) {
    if (r.header("authorization") != "Bearer " + kToken) return MockReply{401, {}, "{}"};
    return MockReply{200, {{"Content-Type", "application/json"}}, R"({"choices":[]})"};
  });
  const auto environment = [&](std::uint16_t admin_port) {
    std::vector<std::string> env;
    for (auto& e : inherited_environment("BACKEND_"))
      if (e.rfind("AZURE_", 0) != 0 && e.rfind("IDENTITY_", 0) != 0) env.push_back(e);
    env.insert(env.end(), {"BACKEND_1_URL=" + backend.url(),
                           "BACKEND_1_NAME=keyless",
                           "BACKEND_1_AUTH=entra",
                           "BACKEND_1_ENTRA_SOURCE=client-secret",
                           "BACKEND_2_URL=" + backend.url(),
                           "BACKEND_2_NAME=msi",
                           "BACKEND_2_AUTH=entra",
                           "BACKEND_2_ENTRA_SOURCE=app-service",
                           "BACKEND_2_PRIORITY=2",
                           "AZURE_TENANT_ID=contoso",
                           "AZURE_CLIENT_ID=app-id",
                           "AZURE_CLIENT_SECRET=" + kSecret,
                           "AZURE_AUTHORITY_HOST=" + token_endpoint.url(),
                           "IDENTITY_ENDPOINT=" + identity_endpoint.url() + "/msi/token",
                           "IDENTITY_HEADER=" + kIdentityHeader,
                           "LISTEN_ADDRESS=127.0.0.1",
                           "PORT=0",
                           "ADMIN_PORT=" + std::to_string(admin_port),
                           "THREADS=1",
                           "LOG_LEVEL=trace"});
    return env;
  };
  const testing::AdminDaemon started = testing::start_with_admin_port(environment);
  ChildProcess& d = *started.child;
  ASSERT_NE(started.api_port, 0) << d.output();
  const std::uint16_t port = started.api_port;
  const std::uint16_t admin_port = started.admin_port;

  const auto r = http_call(port, "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01",
                           {}, R"({"messages":[]})");
  EXPECT_EQ(r.status, 200u) << r.body;
  expect_no_secret("the response", r.body);
  ASSERT_TRUE(identity_endpoint.wait_for_requests(1));
  EXPECT_EQ(identity_endpoint.last_request().header("x-identity-header"), kIdentityHeader);
  EXPECT_NE(token_endpoint.last_request().body.find(kSecret), std::string::npos);
  d.read_until("token refreshed");  // logged once the refresh is published and counted
  d.read_until("MSI is down");

  const auto status = http_call(admin_port, "GET", "/status");
  ASSERT_EQ(status.status, 200u);
  expect_no_secret("/status", status.body);
  const auto j = nlohmann::json::parse(status.body);
  const auto& keyless = j["backends"][0]["credential"];
  EXPECT_EQ(keyless["source"], "client-secret") << status.body;
  EXPECT_EQ(keyless["state"], "valid");
  EXPECT_TRUE(keyless["expires_at"].is_number());
  EXPECT_EQ(keyless["refreshes_ok"], 1);
  const auto& msi = j["backends"][1]["credential"];
  EXPECT_EQ(msi["source"], "app-service");
  EXPECT_EQ(msi["state"], "unavailable") << status.body;
  EXPECT_EQ(msi["last_error"], "token endpoint answered HTTP 500 (MSI is down)");

  const auto metrics = http_call(admin_port, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200u);
  expect_no_secret("/metrics", metrics.body);
  EXPECT_NE(metrics.body.find(R"(smartlb_credential_refreshes_total{backend="keyless",result="ok"} 1)"),
            std::string::npos)
      << metrics.body;
  expect_no_secret("/", http_call(admin_port, "GET", "/").body);

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0);
  const std::string logs = d.output();
  EXPECT_NE(logs.find("token refreshed"), std::string::npos) << logs;
  expect_no_secret("the logs", logs);
}

}  // namespace entra_leak_test
}  // namespace smartlb
