#include "smartlb/admin/pool_snapshot.hpp"
#include "smartlb/admin/prometheus_families.hpp"
#include "smartlb/admin/status_json.hpp"

#include <gtest/gtest.h>

#include "smartlb/config/config_env.hpp"

namespace smartlb {
namespace status_report_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

constexpr const char* kSecret = "sk-canary-7f3a9c1e5b2d4f60";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

struct StatusFixture : ::testing::Test {
  base::ManualClock clock;
  config::Config cfg;
  std::unique_ptr<routing::RoutingTable> table;
  std::unique_ptr<routing::BackendStates> states;
  std::unique_ptr<telemetry::Metrics> metrics;

  void SetUp() override {
    auto loaded = config::load_config_from_env({
        {"BACKEND_1_URL", "https://east.openai.azure.com"},
        {"BACKEND_1_APIKEY", kSecret},
        {"BACKEND_1_NAME", "east"},
        {"BACKEND_2_URL", "http://127.0.0.1:8001"},
        {"BACKEND_2_APIKEY", kSecret},
        {"BACKEND_2_NAME", "west"},
        {"BACKEND_2_PRIORITY", "2"},
        {"BACKEND_2_WEIGHT", "3"},
    });
    ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0]);
    cfg = *loaded.config;
    std::vector<routing::PoolMember> members;
    std::vector<telemetry::Metrics::BackendInfo> info;
    for (const auto& b : cfg.backends) {
      members.push_back({b.name, b.priority, b.weight, b.deployment_name});
      info.push_back({b.name, b.deployment_name});
    }
    table = std::make_unique<routing::RoutingTable>(members);
    states = std::make_unique<routing::BackendStates>(clock, routing::CooldownPolicy{10s, 100ms, 300s});
    states->track(*table);
    metrics = std::make_unique<telemetry::Metrics>(info);
  }

  admin::PoolSnapshot pool_snapshot() const { return admin::snapshot_pool(*table, *states, cfg.backends); }
  void fail(std::size_t i, std::string_view deployment, const routing::Verdict& v,
            std::optional<std::chrono::milliseconds> hint) {
    states->record_failure(table->member(i), deployment, v, hint);
  }
};

TEST_F(StatusFixture, DeploymentCooldownShowsUnderItsDeploymentWithTheRemainingTime) {
  fail(0, "gpt-4o", routing::judge_status(429, true), 30s);
  clock.advance(12'345ms);
  const auto j = build_status(metrics->snapshot(), pool_snapshot());
  const auto& east = j["backends"][0];
  EXPECT_EQ(east["name"], "east");
  EXPECT_EQ(east["url_host"], "east.openai.azure.com");
  EXPECT_EQ(east["scheme"], "https");
  EXPECT_EQ(east["state"], "available") << "only one deployment is cooling";
  EXPECT_EQ(east["cooldown_remaining_ms"], 0);
  EXPECT_EQ(east["cooling_deployments"], 1);
  ASSERT_EQ(east["deployments"].size(), 1u);
  EXPECT_EQ(east["deployments"][0]["name"], "gpt-4o");
  EXPECT_EQ(east["deployments"][0]["state"], "cooling");
  EXPECT_EQ(east["deployments"][0]["cooldown_remaining_ms"], 17'655);
  EXPECT_EQ(east["deployments"][0]["cooldown_cause"], "throttled");
  const auto& west = j["backends"][1];
  EXPECT_EQ(west["priority"], 2);
  EXPECT_EQ(west["weight"], 3);
  EXPECT_EQ(west["url_host"], "127.0.0.1:8001");
  EXPECT_EQ(west["scheme"], "http");
  EXPECT_TRUE(west["deployments"].empty());

  clock.advance(17'655ms);  // exactly at the deadline: available again
  const auto later = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(later["backends"][0]["cooling_deployments"], 0);
}

TEST_F(StatusFixture, RemainingTimeRoundsUp) {
  fail(1, "gpt-4o", judge_transport(routing::TransportFailure::Connect), 1s);
  clock.advance(1ms);
  clock.advance(std::chrono::nanoseconds(1));
  const auto j = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(j["backends"][1]["state"], "unreachable");
  EXPECT_EQ(j["backends"][1]["cooldown_remaining_ms"], 999) << "998.999999 ms left shows as 999";
  EXPECT_EQ(j["backends"][1]["cooldown_cause"], "connect_failed");
}

TEST_F(StatusFixture, AuthFailureMarksTheWholeBackend) {
  fail(0, "gpt-4o", routing::judge_status(401, true), std::nullopt);
  const auto j = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(j["backends"][0]["state"], "auth_failed");
  EXPECT_EQ(j["backends"][0]["cooldown_remaining_ms"], 10'000);
  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());
  EXPECT_TRUE(contains(text, "smartlb_backend_state{backend=\"east\",state=\"auth_failed\"} 1\n"));
  EXPECT_TRUE(contains(text, "smartlb_backend_state{backend=\"east\",state=\"available\"} 0\n"));
  EXPECT_TRUE(contains(text, "smartlb_backend_cooldown_remaining_seconds{backend=\"east\"} 10\n"));
  EXPECT_TRUE(contains(text, "smartlb_backend_state{backend=\"west\",state=\"available\"} 1\n"));
}

TEST_F(StatusFixture, TrafficTokensAndLastErrorPerBackendAndDeployment) {
  telemetry::RequestRecord r;
  r.deployment = "gpt-4o";
  r.start = clock.now();
  r.end = clock.now() + 1'500'000'000;
  auto& a = r.add_attempt();
  a.backend = 0;
  a.status = 429;
  a.cause = routing::FailureCause::Throttled;
  a.cooldown_ms = 30'000;
  auto& b = r.add_attempt();
  b.backend = 1;
  b.status = 200;
  r.served_by = 1;
  r.status = 200;
  r.prompt_tokens = 40;
  r.completion_tokens = 7;
  metrics->on_request_start();
  metrics->on_request(r);
  fail(0, "gpt-4o", routing::judge_status(429, true), 30s);
  clock.advance(2s);

  const auto j = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(j["requests"], 1);
  EXPECT_EQ(j["failovers"], 1);
  EXPECT_EQ(j["in_flight"], 0);
  EXPECT_EQ(j["prompt_tokens"], 40);
  EXPECT_EQ(j["completion_tokens"], 7);
  const auto& east = j["backends"][0];
  EXPECT_EQ(east["requests"], 0);
  EXPECT_EQ(east["attempts"], 1);
  EXPECT_EQ(east["errors"], 1);
  EXPECT_EQ(east["throttled"], 1);
  EXPECT_EQ(east["last_error"]["cause"], "throttled");
  EXPECT_EQ(east["last_error"]["status"], 429);
  EXPECT_EQ(east["last_error"]["deployment"], "gpt-4o");
  EXPECT_EQ(east["last_error"]["ago_ms"], 500);
  EXPECT_EQ(east["deployments"][0]["throttled"], 1);
  EXPECT_EQ(east["deployments"][0]["state"], "cooling");
  const auto& west = j["backends"][1];
  EXPECT_EQ(west["requests"], 1);
  EXPECT_EQ(west["last_error"], nullptr);
  EXPECT_EQ(west["prompt_tokens"], 40);
  EXPECT_EQ(west["deployments"][0]["name"], "gpt-4o");
  EXPECT_EQ(west["deployments"][0]["requests"], 1);
  EXPECT_EQ(west["deployments"][0]["completion_tokens"], 7);
  EXPECT_EQ(west["latency_ms"]["count"], 1);
  EXPECT_EQ(west["latency_ms"]["sum"], 1500.0);
}

TEST_F(StatusFixture, OpenWebSocketSessionsAreShownPerBackend) {
  const routing::InFlight open = states->begin_websocket_session(table->member(1).id);
  const auto doc = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(doc["backends"][0]["websocket_sessions"], 0);
  EXPECT_EQ(doc["backends"][1]["websocket_sessions"], 1);
  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());
  EXPECT_NE(text.find("smartlb_backend_websocket_sessions{backend=\"west\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("smartlb_backend_websocket_sessions{backend=\"east\"} 0\n"), std::string::npos);
}

TEST_F(StatusFixture, PrometheusTextHasTheExpectedSeries) {
  telemetry::RequestRecord r;
  r.deployment = "gpt-4o";
  r.start = 0;
  r.end = 700'000'000;  // 0.7 s
  auto& a = r.add_attempt();
  a.backend = 1;
  a.status = 200;
  a.ttfb_us = 40'000;
  r.served_by = 1;
  r.status = 200;
  r.prompt_tokens = 11;
  r.completion_tokens = 3;
  metrics->on_request(r);
  fail(0, "gpt-4o", routing::judge_status(429, true), 4s);
  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());

  for (const char* line : {
           "# TYPE smartlb_requests_total counter\n",
           "smartlb_requests_total{backend=\"west\",deployment=\"gpt-4o\",code=\"200\"} 1\n",
           "smartlb_prompt_tokens_total{backend=\"west\",deployment=\"gpt-4o\"} 11\n",
           "smartlb_completion_tokens_total{backend=\"west\",deployment=\"gpt-4o\"} 3\n",
           "smartlb_requests_in_flight 0\n",
           "smartlb_upstream_attempts_total{backend=\"west\"} 1\n",
           "smartlb_deployment_cooldown_remaining_seconds{backend=\"east\",deployment=\"gpt-4o\"} 4\n",
           "smartlb_backend_priority{backend=\"west\"} 2\n",
           "smartlb_backend_weight{backend=\"west\"} 3\n",
           "# TYPE smartlb_request_duration_seconds histogram\n",
           "smartlb_request_duration_seconds_bucket{backend=\"west\",le=\"0.5\"} 0\n",
           "smartlb_request_duration_seconds_bucket{backend=\"west\",le=\"1\"} 1\n",
           "smartlb_request_duration_seconds_bucket{backend=\"west\",le=\"+Inf\"} 1\n",
           "smartlb_request_duration_seconds_sum{backend=\"west\"} 0.7\n",
           "smartlb_request_duration_seconds_count{backend=\"west\"} 1\n",
           "smartlb_upstream_ttfb_seconds_bucket{backend=\"west\",le=\"0.05\"} 1\n",
           "smartlb_upstream_ttfb_seconds_sum{backend=\"west\"} 0.04\n",
           "smartlb_request_attempts_bucket{le=\"1\"} 1\n",
           "smartlb_ready 1\n",
       })
    EXPECT_TRUE(contains(text, line)) << "missing: " << line << "\n---\n" << text;
  EXPECT_FALSE(contains(text, kSecret));
}

TEST_F(StatusFixture, ClientsAndTheirBudgetsInMetricsAndStatus) {
  telemetry::RequestRecord r;
  r.client = "search";
  r.deployment = "gpt-4o";
  r.status = 429;
  r.client_limited = true;
  r.priority_class = "batch";
  metrics->on_request(r);
  telemetry::RequestRecord refused;
  refused.status = 401;
  refused.auth_failure = "bad_signature";
  metrics->on_request(refused);
  admin::PoolSnapshot p = pool_snapshot();
  admin::BudgetStatus b;
  b.owner = "client";
  b.name = "search";
  b.limits.tokens_per_minute = 1000;
  b.tokens_minute = 400;
  b.requests_minute = 3;
  p.budgets.push_back(b);
  const std::string text = render_prometheus(metrics->snapshot(), p);
  for (const char* line : {
           "smartlb_client_throttled_total{deployment=\"gpt-4o\",cause=\"client_limit\"} 1\n",
           "smartlb_client_requests_total{client=\"search\"} 1\n",
           "smartlb_client_limited_total{client=\"search\"} 1\n",
           "smartlb_client_tokens_total{client=\"search\",kind=\"prompt\"} 0\n",
           "smartlb_client_auth_failures_total{reason=\"bad_signature\"} 1\n",
           "smartlb_priority_class_requests_total{class=\"batch\"} 1\n",
           "smartlb_priority_class_throttled_total{class=\"batch\"} 1\n",
       })
    EXPECT_TRUE(contains(text, line)) << "missing: " << line << "\n---\n" << text;
  const auto doc = build_status(metrics->snapshot(), p);
  ASSERT_EQ(doc["budgets"].size(), 1u);
  EXPECT_EQ(doc["budgets"][0]["owner"], "client");
  EXPECT_EQ(doc["budgets"][0]["name"], "search");
  EXPECT_EQ(doc["budgets"][0]["limits"], nlohmann::json({{"tokens_per_minute", 1000}}));
  EXPECT_EQ(doc["budgets"][0]["used"]["tokens_per_minute"], 400);
  EXPECT_EQ(doc["budgets"][0]["used"]["requests_per_minute"], 3);
  EXPECT_FALSE(doc["budgets"][0].contains("in_flight_all_replicas")) << "no cap on requests in flight";
}

TEST_F(StatusFixture, ABudgetWithACapShowsItsRequestsInFlightHereAndOnEveryReplica) {
  admin::PoolSnapshot p = pool_snapshot();
  admin::BudgetStatus b{.owner = "client", .name = "batch", .principal = {}, .limits = {.max_in_flight = 4}};
  b.in_flight = 1;
  b.in_flight_all_replicas = 3;
  p.budgets.push_back(b);
  const auto doc = build_status(metrics->snapshot(), p);
  ASSERT_EQ(doc["budgets"].size(), 1u);
  EXPECT_EQ(doc["budgets"][0]["limits"], nlohmann::json({{"max_in_flight", 4}}));
  EXPECT_EQ(doc["budgets"][0]["used"]["max_in_flight"], 1) << "this replica's";
  EXPECT_EQ(doc["budgets"][0]["in_flight_all_replicas"], 3) << "the other replicas' leases too";
}

TEST_F(StatusFixture, CostByClientPricedModelAndBackend) {
  const auto priced = [&](std::string client, std::size_t backend, std::string_view model,
                          cost::PicoUnits cost) {
    telemetry::RequestRecord r;
    r.client = std::move(client);
    r.deployment = "chat";
    r.status = 200;
    r.served_by = static_cast<int>(backend);
    telemetry::AttemptRecord& a = r.add_attempt();
    a.backend = backend;
    a.status = 200;
    r.cost = cost;
    r.cost_model = model;
    metrics->on_request(r);
  };
  priced("search", 1, "gpt-4o", 5'615'000'000);  // $0.005615
  priced("search", 1, "gpt-4o", 42'500'000);     // + $0.0000425
  priced("search", 0, "gpt-4o-mini", 172'200'000);
  priced("batch", 1, "gpt-4o", cost::kPicoPerUnit * 3 / 2);
  telemetry::RequestRecord unpriced;  // no price for its model: counted nowhere
  unpriced.client = "search";
  unpriced.status = 200;
  metrics->on_request(unpriced);
  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());
  for (const char* line : {
           "# TYPE smartlb_cost_total counter\n",
           "smartlb_cost_total{client=\"search\",model=\"gpt-4o\",backend=\"west\"} 0.0056575\n",
           "smartlb_cost_total{client=\"search\",model=\"gpt-4o-mini\",backend=\"east\"} 0.0001722\n",
           "smartlb_cost_total{client=\"batch\",model=\"gpt-4o\",backend=\"west\"} 1.5\n",
       })
    EXPECT_TRUE(contains(text, line)) << "missing: " << line << "\n---\n" << text;
  std::size_t series = 0;
  for (std::size_t at = text.find("\nsmartlb_cost_total{"); at != std::string::npos;
       at = text.find("\nsmartlb_cost_total{", at + 1))
    ++series;
  EXPECT_EQ(series, 3u) << text;
}

TEST_F(StatusFixture, ACostBudgetShowsInStatusInCurrencyUnits) {
  admin::PoolSnapshot p = pool_snapshot();
  admin::BudgetStatus b;
  b.owner = "client";
  b.name = "search";
  b.limits.tokens_per_day = 1000;
  b.limits.cost_per_day = 5 * cost::kPicoPerUnit;
  b.cost_day = 5'615'000'000;
  p.budgets.push_back(b);
  b.name = "tokens-only";
  b.limits.cost_per_day = 0;
  p.budgets.push_back(b);
  p.currency = "USD";
  const auto doc = build_status(metrics->snapshot(), p);
  ASSERT_EQ(doc["budgets"].size(), 2u);
  EXPECT_EQ(doc["budgets"][0]["limits"], nlohmann::json({{"tokens_per_day", 1000}, {"cost_per_day", 5.0}}));
  EXPECT_EQ(doc["budgets"][0]["currency"], "USD") << "what its cost limits are counted in";
  EXPECT_FALSE(doc["budgets"][1].contains("currency")) << "a budget of tokens says nothing of money";
  EXPECT_DOUBLE_EQ(doc["budgets"][0]["used"]["cost_per_day"].get<double>(), 0.005615);
  EXPECT_FALSE(doc["budgets"][0]["used"].contains("cost_per_month")) << "only the cost limits set";
}

TEST_F(StatusFixture, UpstreamResponsesByBackendAndCodeInMetricsAndStatus) {
  telemetry::RequestRecord r;
  r.deployment = "gpt-4o";
  auto& a = r.add_attempt();  // east: no response head
  a.backend = 0;
  a.cause = routing::FailureCause::TlsFailed;
  auto& b = r.add_attempt();
  b.backend = 0;
  b.status = 429;
  b.cause = routing::FailureCause::Throttled;
  auto& c = r.add_attempt();
  c.backend = 1;
  c.status = 503;
  c.cause = routing::FailureCause::ServerError;
  auto& d = r.add_attempt();
  d.backend = 1;
  d.status = 200;
  r.served_by = 1;
  r.status = 200;
  metrics->on_request(r);
  telemetry::RequestRecord odd;
  odd.add_attempt() = telemetry::AttemptRecord{1, 999, routing::FailureCause::None, 0, 0};
  odd.served_by = 1;
  odd.status = 999;
  metrics->on_request(odd);

  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());
  for (const char* line : {
           "# HELP smartlb_upstream_responses_total ",
           "# TYPE smartlb_upstream_responses_total counter\n",
           "smartlb_upstream_responses_total{backend=\"east\",code=\"429\"} 1\n",
           "smartlb_upstream_responses_total{backend=\"east\",code=\"transport\",cause=\"tls_failed\"} 1\n",
           "smartlb_upstream_responses_total{backend=\"west\",code=\"200\"} 1\n",
           "smartlb_upstream_responses_total{backend=\"west\",code=\"503\"} 1\n",
           "smartlb_upstream_responses_total{backend=\"west\",code=\"other\"} 1\n",
       })
    EXPECT_TRUE(contains(text, line)) << "missing: " << line << "\n---\n" << text;
  EXPECT_FALSE(contains(text, "smartlb_upstream_responses_total{backend=\"west\",code=\"999\"}"));
  EXPECT_FALSE(contains(text, "smartlb_upstream_responses_total{backend=\"east\",code=\"0\"}"));
  // The family is declared once, before its samples.
  const auto type = text.find("# TYPE smartlb_upstream_responses_total counter\n");
  EXPECT_EQ(text.find("# TYPE smartlb_upstream_responses_total", type + 1), std::string::npos);
  EXPECT_LT(type, text.find("smartlb_upstream_responses_total{"));

  const auto j = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(j["backends"][0]["responses"], (nlohmann::json{{"429", 1}, {"transport", 1}}));
  EXPECT_EQ(j["backends"][1]["responses"], (nlohmann::json{{"200", 1}, {"503", 1}, {"other", 1}}));
  const auto idle =
      build_status(telemetry::Metrics({{"east", ""}, {"west", ""}}).snapshot(), pool_snapshot());
  EXPECT_EQ(idle["backends"][0]["responses"], nlohmann::json::object()) << "an object even when empty";
}

TEST_F(StatusFixture, HostNameLookupsAreCountedPerBackendAndResult) {
  metrics->on_dns_lookup(0, true);
  metrics->on_dns_lookup(0, true);
  metrics->on_dns_lookup(0, false);
  metrics->on_dns_lookup(7, true);  // not a backend: ignored
  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());
  for (const char* line : {
           "# TYPE smartlb_dns_lookups_total counter\n",
           "smartlb_dns_lookups_total{backend=\"east\",result=\"ok\"} 2\n",
           "smartlb_dns_lookups_total{backend=\"east\",result=\"failed\"} 1\n",
           "smartlb_dns_lookups_total{backend=\"west\",result=\"ok\"} 0\n",
       })
    EXPECT_TRUE(contains(text, line)) << "missing: " << line << "\n---\n" << text;
  const auto j = build_status(metrics->snapshot(), pool_snapshot());
  EXPECT_EQ(j["backends"][0]["dns_lookups"], 3);
  EXPECT_EQ(j["backends"][0]["dns_failures"], 1);
  EXPECT_EQ(j["backends"][1]["dns_lookups"], 0);
}

TEST_F(StatusFixture, EntraCredentialShowsSourceStateExpiryAndRefreshes) {
  metrics->on_credential_refresh("east", true);
  metrics->on_credential_refresh("east", false);
  metrics->on_credential_refresh("east", false);
  metrics->on_credential_refresh("nobody", true);  // not a backend: ignored
  admin::PoolSnapshot pool = pool_snapshot();
  pool.backends[0].credential = admin::PoolSnapshot::Backend::Credential{
      "imds", "imds system-assigned https://cognitiveservices.azure.com/.default", "failing", 1'800'003'600,
      "token endpoint answered HTTP 500"};
  const std::string text = render_prometheus(metrics->snapshot(), pool);
  for (const char* line : {
           "# TYPE smartlb_credential_refreshes_total counter\n",
           "smartlb_credential_refreshes_total{backend=\"east\",result=\"ok\"} 1\n",
           "smartlb_credential_refreshes_total{backend=\"east\",result=\"failed\"} 2\n",
       })
    EXPECT_TRUE(contains(text, line)) << "missing: " << line << "\n---\n" << text;
  EXPECT_FALSE(contains(text, "smartlb_credential_refreshes_total{backend=\"west\"")) << "west uses a key";
  const auto j = build_status(metrics->snapshot(), pool);
  EXPECT_EQ(j["backends"][0]["credential"],
            (nlohmann::json{{"source", "imds"},
                            {"name", "imds system-assigned https://cognitiveservices.azure.com/.default"},
                            {"state", "failing"},
                            {"expires_at", 1'800'003'600},
                            {"last_error", "token endpoint answered HTTP 500"},
                            {"refreshes_ok", 1},
                            {"refreshes_failed", 2}}));
  EXPECT_FALSE(j["backends"][1].contains("credential"));
}

TEST_F(StatusFixture, NoKeyInStatusOrMetrics) {
  fail(0, "gpt-4o", routing::judge_status(401, true), std::nullopt);
  const std::string status = build_status(metrics->snapshot(), pool_snapshot()).dump();
  const std::string text = render_prometheus(metrics->snapshot(), pool_snapshot());
  EXPECT_FALSE(contains(status, kSecret));
  EXPECT_FALSE(contains(text, kSecret));
  EXPECT_FALSE(contains(status, "sk-canary"));
}

TEST(PrometheusLabels, EscapedPerTheTextFormat) {
  EXPECT_EQ(admin::escape_label_value("plain-1.0_x"), "plain-1.0_x");
  EXPECT_EQ(admin::escape_label_value("a\"b"), "a\\\"b");
  EXPECT_EQ(admin::escape_label_value("a\\b"), "a\\\\b");
  EXPECT_EQ(admin::escape_label_value("a\nb"), "a\\nb");
  EXPECT_EQ(admin::escape_label_value("caf\xc3\xa9"), "caf\xc3\xa9") << "valid UTF-8 is kept";
  EXPECT_EQ(admin::escape_label_value("bad\xff\xc3"), "bad??") << "invalid UTF-8 is replaced";
  EXPECT_EQ(admin::escape_label_value("\xc0\xaf"), "??") << "overlong encodings are invalid";
}

TEST(PrometheusLabels, HostileDeploymentNameStaysOneLabel) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  telemetry::RequestRecord r;
  r.deployment = "x\"} 1\nsmartlb_fake 1\n";
  r.status = 404;
  m.on_request(r);
  const std::string text = render_prometheus(m.snapshot(), admin::PoolSnapshot{});
  EXPECT_TRUE(contains(text, "deployment=\"x\\\"} 1\\nsmartlb_fake 1\\n\""));
  EXPECT_FALSE(contains(text, "\nsmartlb_fake 1"));
}

TEST(BackendState, FromTheCooldownCause) {
  EXPECT_EQ(admin::backend_state({0, routing::FailureCause::None}, 5), "available");
  EXPECT_EQ(admin::backend_state({5, routing::FailureCause::Timeout}, 5), "available") << "deadline reached";
  EXPECT_EQ(admin::backend_state({6, routing::FailureCause::Timeout}, 5), "cooling");
  EXPECT_EQ(admin::backend_state({6, routing::FailureCause::AuthRejected}, 5), "auth_failed");
  EXPECT_EQ(admin::backend_state({6, routing::FailureCause::Credential}, 5), "auth_failed");
  EXPECT_EQ(admin::backend_state({6, routing::FailureCause::TlsFailed}, 5), "unreachable");
}

}  // namespace status_report_test
}  // namespace smartlb

namespace smartlb {
namespace status_report_test {

TEST(StatusQuota, DeclaredQuotaUsageShowsInStatusAndMetrics) {
  base::ManualClock clock;
  config::Config cfg;
  config::BackendConfig b;
  b.name = "east";
  b.url.host_header = "east.example.com";
  cfg.backends.push_back(b);
  routing::PoolMember m{"east", 1, 1, "", 1000, 10, std::chrono::seconds(60)};
  const routing::RoutingTable table({m});
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(table);
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  ASSERT_TRUE(states.reserve(table.member(0), "gpt-4o", 250));
  telemetry::RequestRecord rec;
  rec.deployment = "gpt-4o";
  rec.served_by = 0;
  rec.status = 200;
  rec.add_attempt().backend = 0;
  metrics.on_request(rec);

  const auto snap = admin::snapshot_pool(table, states, cfg.backends);
  const auto j = build_status(metrics.snapshot(), snap);
  const auto& east = j["backends"][0];
  EXPECT_EQ(east["quota"]["tokens_per_window"], 1000);
  EXPECT_EQ(east["quota"]["requests_per_window"], 10);
  EXPECT_EQ(east["quota"]["window_ms"], 60000);
  ASSERT_EQ(east["deployments"].size(), 1u);
  EXPECT_EQ(east["deployments"][0]["quota_used"]["tokens"], 250);
  EXPECT_EQ(east["deployments"][0]["quota_used"]["requests"], 1);

  const std::string text = render_prometheus(metrics.snapshot(), snap);
  EXPECT_NE(
      text.find(R"(smartlb_quota_used_ratio{backend="east",deployment="gpt-4o",resource="tokens"} 0.25)"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(smartlb_quota_used_ratio{backend="east",deployment="gpt-4o",resource="requests"} 0.1)"),
      std::string::npos);
}

TEST(StatusQuota, OnlyTheLimitsDeclaredAreShown) {
  base::ManualClock clock;
  config::Config cfg;
  config::BackendConfig b;
  b.name = "east";
  cfg.backends.push_back(b);
  routing::PoolMember m{"east", 1, 1, "", 0, 10, std::chrono::seconds(60)};  // BACKEND_1_RPM only
  const routing::RoutingTable table({m});
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(table);
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  ASSERT_TRUE(states.reserve(table.member(0), "gpt-4o", 250));
  const auto j = build_status(metrics.snapshot(), admin::snapshot_pool(table, states, cfg.backends));
  const auto& quota = j["backends"][0]["quota"];
  EXPECT_FALSE(quota.contains("tokens_per_window")) << quota;
  EXPECT_EQ(quota["requests_per_window"], 10);
}

}  // namespace status_report_test
}  // namespace smartlb

namespace smartlb {
namespace status_report_test {

TEST(StatusRules, RulesAndTheirTargetsShowInStatus) {
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  admin::PoolSnapshot p;
  p.config_hash = "abc123";
  admin::RuleStatus r;
  r.id = "fast";
  r.type = config::RuleType::Latency;
  r.models = {"gpt-4o"};
  r.metadata = {{"env", "dev"}};
  admin::RuleStatus::Target t;
  t.id = "east/gpt-4o";
  t.backend = "east";
  t.upstream_name = "gpt-4o-0806";
  t.state = "cooling";
  t.cooldown_remaining_ms = 1500;
  t.latency_ms_per_token = 12.5;
  t.latency_samples = 7;
  r.targets.push_back(t);
  p.rules.push_back(r);
  const auto doc = build_status(metrics.snapshot(), p);
  ASSERT_TRUE(doc.contains("config")) << doc.dump(2);
  EXPECT_EQ(doc["config"]["hash"], "abc123");
  const auto& rule = doc["config"]["rules"][0];
  EXPECT_EQ(rule["id"], "fast");
  EXPECT_EQ(rule["type"], "latency-based-routing");
  EXPECT_EQ(rule["target_settings"], nlohmann::json::array()) << "latency alone routes a latency rule";
  EXPECT_EQ(rule["when"]["models"][0], "gpt-4o");
  EXPECT_EQ(rule["when"]["metadata"]["env"], "dev");
  const auto& target = rule["targets"][0];
  EXPECT_EQ(target["upstream_name"], "gpt-4o-0806");
  EXPECT_EQ(target["state"], "cooling");
  EXPECT_EQ(target["latency"]["samples"], 7);
  EXPECT_DOUBLE_EQ(target["latency"]["ms_per_token"].get<double>(), 12.5);
}

TEST(StatusRules, BackendsAreShownByIdAfterAReloadRemovedOne) {
  // Ids 0 (removed by a reload) and 1: metrics and pool must agree on which is which.
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"gone", ""}, {"kept", ""}});
  admin::PoolSnapshot p;
  p.backends.resize(2);
  p.backends[0].present = false;
  p.backends[1].name = "kept";
  p.backends[1].priority = 7;
  const std::string text = render_prometheus(metrics.snapshot(), p);
  EXPECT_NE(text.find("smartlb_backend_priority{backend=\"kept\"} 7"), std::string::npos) << text;
  EXPECT_EQ(text.find("smartlb_backend_priority{backend=\"gone\"}"), std::string::npos) << text;
  const auto doc = build_status(metrics.snapshot(), p);
  ASSERT_EQ(doc["backends"].size(), 1u);
  EXPECT_EQ(doc["backends"][0]["name"], "kept");
}

// A broker that leaves every lease shared and answers nothing: what /status shows of a lease.
// Answers nothing by itself: the test answers its last ask.
struct SilentBroker : routing::LeaseBroker {
  void attach(routing::SharedLease& lease) override {
    std::lock_guard lock(lease.mutex);
    lease.quota.set_shared(true, 2);
  }
  void send(routing::SharedLease& lease, const routing::LeasedQuota::Ask& ask) override {
    last_lease = &lease;
    last_ask = ask;
  }
  routing::SharedLease* last_lease = nullptr;
  routing::LeasedQuota::Ask last_ask;
};

TEST(StatusQuota, ASharedQuotasLeaseShowsInStatus) {
  base::ManualClock clock;
  config::Config cfg;
  config::BackendConfig b;
  b.name = "east";
  cfg.backends.push_back(b);
  routing::PoolMember m{"east", 1, 1, "", 100'000, 0, std::chrono::seconds(60)};
  const routing::RoutingTable table({m});
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  SilentBroker broker;
  states.set_lease_broker(&broker);
  states.track(table);
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  ASSERT_TRUE(states.reserve(table.member(0), "gpt-4o", 250)) << "on credit, before any answer";
  telemetry::RequestRecord rec;  // the deployment has a metrics label: /status lists it
  rec.deployment = "gpt-4o";
  rec.served_by = 0;
  rec.status = 200;
  rec.add_attempt().backend = 0;
  metrics.on_request(rec);

  const auto j = build_status(metrics.snapshot(), admin::snapshot_pool(table, states, cfg.backends));
  ASSERT_EQ(j["backends"][0]["deployments"].size(), 1u);
  const auto& lease = j["backends"][0]["deployments"][0]["lease"];
  EXPECT_EQ(lease["tokens"]["shared"], true);
  EXPECT_EQ(lease["tokens"]["taken"], 250);
  EXPECT_EQ(lease["tokens"]["leased"], 0) << "nothing granted yet";
  EXPECT_FALSE(lease["tokens"].contains("counted_all_replicas")) << "Redis has not said yet";
  EXPECT_FALSE(lease.contains("requests")) << "no request quota declared: no lease";

  ASSERT_NE(broker.last_lease, nullptr);
  {
    std::lock_guard lock(broker.last_lease->mutex);
    broker.last_lease->quota.granted(broker.last_ask, 1'000, clock.wall_now(), 4'000);
  }
  const auto answered = build_status(metrics.snapshot(), admin::snapshot_pool(table, states, cfg.backends));
  const auto& tokens = answered["backends"][0]["deployments"][0]["lease"]["tokens"];
  EXPECT_EQ(tokens["leased"], 1'000);
  EXPECT_EQ(tokens["counted_all_replicas"], 4'000) << "what every replica holds, as Redis said";
}

// A quota declared only by a target (model_configs' usage_limits) on a renamed deployment: it
// shows under the name its state is kept under, the backend's own name for it, in /status and
// in the metrics, as do the requests it served.
TEST(StatusQuota, ATargetsQuotaShowsUnderTheDeploymentItsBackendServes) {
  base::ManualClock clock;
  config::Config cfg;
  config::BackendConfig b;
  b.name = "east";
  b.url.host_header = "east.example.com";
  cfg.backends.push_back(b);
  const routing::RoutingTable backends({routing::PoolMember{"east", 1, 1, ""}});
  routing::PoolMember target{"east", 1, 1, "gpt-4o-0806", 0, 4, std::chrono::seconds(60)};
  const routing::RoutingTable rule({target});
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(backends);
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  ASSERT_TRUE(states.reserve(rule.member(0), "gpt-4o", 200));
  telemetry::RequestRecord rec;
  rec.deployment = "gpt-4o";  // what the client asked for
  rec.served_by = 0;
  rec.status = 200;
  telemetry::AttemptRecord& a = rec.add_attempt();
  a.backend = 0;
  a.deployment = "gpt-4o-0806";
  metrics.on_request(rec);

  const routing::RoutingTable* rules[] = {&rule};
  const auto snap = admin::snapshot_pool(backends, states, cfg.backends, rules);
  const auto j = build_status(metrics.snapshot(), snap);
  const auto& east = j["backends"][0];
  EXPECT_FALSE(east.contains("quota")) << "the backend declares none";
  ASSERT_EQ(east["deployments"].size(), 1u);
  EXPECT_EQ(east["deployments"][0]["name"], "gpt-4o-0806");
  EXPECT_EQ(east["deployments"][0]["quota"]["requests_per_window"], 4);
  EXPECT_EQ(east["deployments"][0]["quota_used"]["requests"], 1);
  EXPECT_EQ(east["deployments"][0]["requests"], 1);

  const std::string text = render_prometheus(metrics.snapshot(), snap);
  EXPECT_NE(
      text.find(
          R"(smartlb_quota_used_ratio{backend="east",deployment="gpt-4o-0806",resource="requests"} 0.25)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(smartlb_requests_total{backend="east",deployment="gpt-4o-0806",code="200"} 1)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(R"(deployment="other")"), std::string::npos) << text;
}

}  // namespace status_report_test
}  // namespace smartlb
