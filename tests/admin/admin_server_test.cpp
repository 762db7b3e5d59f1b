// The admin endpoints over real sockets: smartlb in-process in front of two scripted
// backends, then /healthz, /readyz, /metrics (checked by promtool), /status and /.
#include "smartlb/admin/admin_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <regex>

#include <nlohmann/json.hpp>

#include "admin_promtool.hpp"
#include "admin_test_support.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "smartlb/config/config_env.hpp"
#include "smartlb/net/server.hpp"

namespace smartlb {
namespace admin_server_test {  // named, not anonymous: tests/CMakeLists.txt

using smartlb::testing::http_call;
using smartlb::testing::HttpResponse;
using smartlb::testing::MockBackend;
using smartlb::testing::MockReply;
using smartlb::testing::SeenRequest;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01";
const std::string kChat35 = "/openai/deployments/gpt-35/chat/completions?api-version=2024-06-01";

MockReply throttled() {
  return {429,
          {{"Content-Type", "application/json"}, {"Retry-After", "120"}},
          R"({"error":{"code":"429","message":"Rate limit"}})"};
}

MockReply completion(const SeenRequest& req) {
  if (req.body.find("\"stream\":true") != std::string::npos) {
    MockReply r{200, {{"Content-Type", "text/event-stream"}}, ""};
    r.events = {
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}],\"usage\":null}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}],\"usage\":null}\n\n",
        "data: "
        "{\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n",
        "data: [DONE]\n\n"};
    return r;
  }
  return {
      200,
      {{"Content-Type", "application/json"}},
      R"({"choices":[{"message":{"content":"Hello"}}],"usage":{"prompt_tokens":17,"completion_tokens":5,"total_tokens":22}})"};
}

std::optional<double> sample_value(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(text.substr(at + series.size() + 2));
}

class AdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // east (priority 1) is rate limited on every deployment; west serves gpt-4o and is
    // rate limited on gpt-35.
    east_ = std::make_unique<MockBackend>([](const SeenRequest&) { return throttled(); });
    west_ = std::make_unique<MockBackend>([](const SeenRequest& req) {
      if (req.target.find("/gpt-35/") != std::string::npos) return throttled();
      return completion(req);
    });
    auto loaded = config::load_config_from_env({
        {"BACKEND_1_URL", east_->url()},
        {"BACKEND_1_NAME", "east"},
        {"BACKEND_1_APIKEY", "k-east"},
        {"BACKEND_2_URL", west_->url()},
        {"BACKEND_2_NAME", "west"},
        {"BACKEND_2_PRIORITY", "2"},
        {"BACKEND_2_APIKEY", "k-west"},
        {"LISTEN_ADDRESS", "127.0.0.1"},
        {"PORT", "0"},
        {"THREADS", "2"},
        {"ACCESS_LOG", "off"},
    });
    ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0]);
    std::vector<telemetry::Metrics::BackendInfo> info;
    for (const auto& b : loaded.config->backends) info.push_back({b.name, b.deployment_name});
    metrics_ = std::make_unique<telemetry::Metrics>(info);
    observer_ = std::make_unique<test::AwaitableObserver>(*metrics_);
    server_ = std::make_unique<net::Server>(*loaded.config, net::ServerOptions{.observer = observer_.get()});
    server_->start();
    admin_ = std::make_unique<admin::AdminServer>(*server_, *metrics_, admin::AdminOptions{"127.0.0.1", 0});
    admin_->start();
  }
  void TearDown() override {
    if (admin_) admin_->stop();
    if (server_) {
      server_->request_stop();
      server_->wait();
    }
  }

  HttpResponse api(const std::string& target, const std::string& body) {
    return http_call(server_->port(), "POST", target, {}, body);
  }
  HttpResponse admin_get(const std::string& path) { return http_call(admin_->port(), "GET", path); }

  std::unique_ptr<MockBackend> east_, west_;
  std::unique_ptr<telemetry::Metrics> metrics_;
  std::unique_ptr<test::AwaitableObserver> observer_;
  std::unique_ptr<net::Server> server_;
  std::unique_ptr<admin::AdminServer> admin_;
};

TEST_F(AdminServerTest, HealthAndReadiness) {
  const auto health = admin_get("/healthz");
  EXPECT_EQ(health.status, 200u);
  EXPECT_EQ(health.body, "ok\n");
  const auto ready = admin_get("/readyz");
  EXPECT_EQ(ready.status, 200u);
  EXPECT_EQ(ready.body, "ready\n");

  server_->request_stop();
  const auto draining = admin_get("/readyz");
  EXPECT_EQ(draining.status, 503u) << "not ready while draining";
  EXPECT_EQ(draining.body, "draining\n");
  EXPECT_EQ(admin_get("/healthz").status, 200u) << "alive while draining";
}

TEST_F(AdminServerTest, UnknownPathsAndMethods) {
  EXPECT_EQ(admin_get("/nope").status, 404u);
  const auto post = http_call(admin_->port(), "POST", "/metrics", {}, "{}");
  EXPECT_EQ(post.status, 405u);
  EXPECT_EQ(post.header("allow"), "GET, HEAD");
  const auto head = http_call(admin_->port(), "HEAD", "/status");
  EXPECT_EQ(head.status, 200u);
  EXPECT_TRUE(head.body.empty());
  EXPECT_TRUE(head.has_header("content-length"));
  EXPECT_NE(head.header("content-length"), "0");
}

TEST_F(AdminServerTest, ApiPortDoesNotServeAdminEndpoints) {
  const auto r = http_call(server_->port(), "GET", "/metrics");
  EXPECT_EQ(r.body.find("smartlb_requests_total"), std::string::npos);
}

TEST_F(AdminServerTest, MetricsAndStatusAfterFailoverStreamAndThrottling) {
  // 1. east answers 429 (Retry-After 120): failover to west, which reports usage 17/5.
  const auto first = api(kChat, R"({"messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(first.header("x-smartlb-backend"), "west");
  // 2. east is cooling for gpt-4o: straight to west; a stream with usage 9/2 at its end.
  const auto second = api(kChat, R"({"stream":true,"messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(second.status, 200u) << second.body;
  EXPECT_NE(second.body.find("data: [DONE]"), std::string::npos) << "the stream is relayed whole";
  EXPECT_NE(second.body.find("\"prompt_tokens\":9"), std::string::npos);
  // 3. gpt-35: every backend is rate limited -> smartlb answers 429 itself.
  const auto third = api(kChat35, R"({"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(third.status, 429u);
  ASSERT_TRUE(observer_->wait_for(3));

  const auto metrics = admin_get("/metrics");
  ASSERT_EQ(metrics.status, 200u);
  EXPECT_EQ(metrics.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& t = metrics.body;
  const auto value = [&](const std::string& series) {
    const auto v = sample_value(t, series);
    EXPECT_TRUE(v.has_value()) << "no sample " << series << " in\n" << t;
    return v.value_or(-1);
  };
  EXPECT_EQ(value(R"(smartlb_requests_total{backend="west",deployment="gpt-4o",code="200"})"), 2);
  EXPECT_EQ(value(R"(smartlb_requests_total{backend="none",deployment="gpt-35",code="429"})"), 1);
  EXPECT_EQ(value(R"(smartlb_client_throttled_total{deployment="gpt-35",cause="upstream"})"), 1);
  EXPECT_EQ(value(R"(smartlb_failovers_total{backend="east",deployment="gpt-4o",cause="throttled"})"), 1);
  EXPECT_EQ(value(R"(smartlb_failovers_total{backend="east",deployment="gpt-35",cause="throttled"})"), 1);
  EXPECT_EQ(value(R"(smartlb_failovers_total{backend="west",deployment="gpt-35",cause="throttled"})"), 1);
  EXPECT_EQ(value(R"(smartlb_cooldowns_started_total{backend="east",deployment="gpt-4o",cause="throttled"})"),
            1);
  EXPECT_EQ(value(R"(smartlb_prompt_tokens_total{backend="west",deployment="gpt-4o"})"), 17 + 9);
  EXPECT_EQ(value(R"(smartlb_completion_tokens_total{backend="west",deployment="gpt-4o"})"), 5 + 2);
  EXPECT_EQ(value(R"(smartlb_request_attempts_bucket{le="1"})"), 1);
  EXPECT_EQ(value(R"(smartlb_request_attempts_bucket{le="2"})"), 3);
  EXPECT_EQ(value(R"(smartlb_request_attempts_count)"), 3);
  EXPECT_EQ(value(R"(smartlb_upstream_attempts_total{backend="east"})"), 2);
  EXPECT_EQ(value(R"(smartlb_upstream_attempts_total{backend="west"})"), 3);
  EXPECT_EQ(value(R"(smartlb_request_duration_seconds_count{backend="west"})"), 2);
  EXPECT_EQ(value(R"(smartlb_upstream_ttfb_seconds_count{backend="east"})"), 2);
  EXPECT_EQ(value(R"(smartlb_requests_in_flight)"), 0);
  EXPECT_EQ(value(R"(smartlb_ready)"), 1);
  EXPECT_EQ(value(R"(smartlb_backend_state{backend="east",state="available"})"), 1)
      << "east cools per deployment, not as a whole";
  const double cooling =
      value(R"(smartlb_deployment_cooldown_remaining_seconds{backend="east",deployment="gpt-4o"})");
  EXPECT_GT(cooling, 0);
  EXPECT_LE(cooling, 120);

  const auto check = test::promtool_check_metrics(t);
  ASSERT_TRUE(check.ran) << check.output;
  EXPECT_EQ(check.exit_code, 0) << "promtool check metrics:\n" << check.output << "\n---\n" << t;

  const auto status = admin_get("/status");
  ASSERT_EQ(status.status, 200u);
  EXPECT_EQ(status.header("content-type"), "application/json");
  const auto j = nlohmann::json::parse(status.body);
  EXPECT_EQ(j["requests"], 3);
  EXPECT_EQ(j["client_throttled"], 1);
  EXPECT_EQ(j["prompt_tokens"], 26);
  EXPECT_EQ(j["ready"], true);
  const auto& east = j["backends"][0];
  EXPECT_EQ(east["name"], "east");
  EXPECT_EQ(east["url_host"], "127.0.0.1:" + std::to_string(east_->port()));
  EXPECT_EQ(east["priority"], 1);
  EXPECT_EQ(east["state"], "available");
  EXPECT_EQ(east["cooling_deployments"], 2);
  EXPECT_EQ(east["throttled"], 2);
  EXPECT_EQ(east["last_error"]["cause"], "throttled");
  EXPECT_EQ(east["last_error"]["status"], 429);
  bool saw_gpt4o = false;
  for (const auto& d : east["deployments"]) {
    if (d["name"] != "gpt-4o") continue;
    saw_gpt4o = true;
    EXPECT_EQ(d["state"], "cooling");
    EXPECT_EQ(d["cooldown_cause"], "throttled");
    EXPECT_GT(d["cooldown_remaining_ms"].get<std::int64_t>(), 0);
    EXPECT_LE(d["cooldown_remaining_ms"].get<std::int64_t>(), 120'000);
  }
  EXPECT_TRUE(saw_gpt4o) << status.body;
  const auto& west = j["backends"][1];
  EXPECT_EQ(west["requests"], 2);
  EXPECT_EQ(west["prompt_tokens"], 26);
  EXPECT_EQ(west["completion_tokens"], 7);
  EXPECT_EQ(west["latency_ms"]["count"], 2);

  // Neither key reached an admin answer (the backends did get them).
  for (const char* key : {"k-east", "k-west"}) {
    EXPECT_EQ(t.find(key), std::string::npos) << key;
    EXPECT_EQ(status.body.find(key), std::string::npos) << key;
  }
  // The backends did get their keys (on the requests forwarded; health probes carry none).
  const auto east_requests = east_->requests();
  const auto forwarded = std::find_if(east_requests.begin(), east_requests.end(),
                                      [](const SeenRequest& r) { return r.method == "POST"; });
  ASSERT_NE(forwarded, east_requests.end());
  EXPECT_EQ(forwarded->header("api-key"), "k-east");
}

TEST_F(AdminServerTest, StatusPageIsSelfContained) {
  const auto page = admin_get("/");
  ASSERT_EQ(page.status, 200u);
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.header("content-security-policy").find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  EXPECT_NE(page.body.find("/status"), std::string::npos) << "the page polls /status";
  // No external resources: nothing loaded from another origin.
  const std::regex external(R"((src|href)\s*=\s*["']?(https?:)?//)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(page.body, external));
  EXPECT_EQ(page.body.find("@import"), std::string::npos);
}

}  // namespace admin_server_test
}  // namespace smartlb
