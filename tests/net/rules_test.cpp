// Routing by the config file's rules, over sockets: a rule's conditions (metadata, subjects,
// model) send a request where they say, a target renames the model (path or body) and applies
// its override_params, no match is a 404, and a reload under traffic loses nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "continuous_traffic.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb::testing {
namespace rules_test {  // named, not anonymous: tests/CMakeLists.txt

MockReply ok(const std::string& who) {
  return {200, {{"content-type", "application/json"}}, "{\"from\":\"" + who + "\"}"};
}

// Loads `yaml` (with ${A_URL} and ${B_URL} for the two mock backends) into the harness.
void load(ProxyHarness& p, const std::string& yaml, const MockBackend& a, const MockBackend& b,
          config::EnvMap env = {}) {
  env["A_URL"] = a.url();
  env["B_URL"] = b.url();
  ASSERT_EQ(p.use_config_text(env, yaml), "");
}

const char* kBackends = R"(
backends:
  - {name: a, url: "${A_URL}"}
  - {name: b, url: "${B_URL}"}
)";

TEST(Rules, AMetadataRuleRoutesWhereItSaysAndTheHeaderStaysHere) {
  MockBackend a([](const SeenRequest&) { return ok("a"); }), b([](const SeenRequest&) { return ok("b"); });
  ProxyHarness p;
  load(p, std::string(kBackends) + R"(
targets: [{id: a/m, backend: a}, {id: b/m, backend: b}]
rules:
  - {id: dev, type: weight-based-routing, when: {metadata: {env: dev}}, load_balance_targets: [{target: a/m}]}
  - {id: rest, type: weight-based-routing, load_balance_targets: [{target: b/m}]}
)",
       a, b);
  p.start();
  const std::string path = "/openai/deployments/m/chat/completions?api-version=1";
  auto dev = http_call(p.port(), "POST", path, {{"x-smartlb-metadata", R"({"env":"dev","team":"x"})"}}, "{}");
  EXPECT_EQ(dev.body, R"({"from":"a"})");
  EXPECT_FALSE(a.last_request().has_header("x-smartlb-metadata")) << "routing metadata is not forwarded";
  auto prod = http_call(p.port(), "POST", path, {{"x-smartlb-metadata", R"({"env":"prod"})"}}, "{}");
  EXPECT_EQ(prod.body, R"({"from":"b"})");
  auto none = http_call(p.port(), "POST", path, {}, "{}");
  EXPECT_EQ(none.body, R"({"from":"b"})");
  auto bad = http_call(p.port(), "POST", path, {{"x-smartlb-metadata", R"({"env":1})"}}, "{}");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_NE(bad.body.find("x-smartlb-metadata"), std::string::npos);
}

TEST(Rules, AnInvalidMetadataHeaderIs400EvenWhenNoRuleReadsMetadata) {
  MockBackend a([](const SeenRequest&) { return ok("a"); });
  ProxyHarness p;
  p.add_backend("a", a.url());
  p.start();
  const std::string path = "/openai/deployments/m/chat/completions?api-version=1";
  const auto bad = http_call(p.port(), "POST", path, {{"x-smartlb-metadata", "not json"}}, "{}");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(a.request_count(), 0u);
  EXPECT_EQ(http_call(p.port(), "POST", path, {{"x-smartlb-metadata", R"({"env":"dev"})"}}, "{}").status,
            200u);
}

TEST(Rules, ASubjectRuleRoutesByTheClientsKey) {
  MockBackend a([](const SeenRequest&) { return ok("a"); }), b([](const SeenRequest&) { return ok("b"); });
  ProxyHarness p;
  load(p, std::string(kBackends) + R"(
targets: [{id: a/m, backend: a}, {id: b/m, backend: b}]
clients:
  - {name: search, key: "${SEARCH_KEY}", subjects: [team:search, user:alice]}
  - {name: other, key_sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
rules:
  - {id: search, type: priority-based-routing, when: {subjects: [team:search]}, load_balance_targets: [{target: a/m}]}
  - {id: rest, type: priority-based-routing, load_balance_targets: [{target: b/m}]}
)",
       a, b, {{"SEARCH_KEY", "search-key-123"}});
  p.start();
  const std::string path = "/openai/deployments/m/chat/completions?api-version=1";
  EXPECT_EQ(http_call(p.port(), "POST", path, {{"api-key", "search-key-123"}}, "{}").body, R"({"from":"a"})");
  // "test" is the key whose SHA-256 the config holds.
  EXPECT_EQ(http_call(p.port(), "POST", path, {{"Authorization", "Bearer test"}}, "{}").body,
            R"({"from":"b"})");
  EXPECT_EQ(http_call(p.port(), "POST", path, {{"api-key", "unknown-key"}}, "{}").status, 401u);
  EXPECT_EQ(a.request_count() + b.request_count(), 2u);
}

TEST(Rules, ATargetRenamesTheModelInThePathOrTheBody) {
  MockBackend a([](const SeenRequest&) { return ok("a"); }), b([](const SeenRequest&) { return ok("b"); });
  ProxyHarness p;
  load(p, std::string(kBackends) + R"(
targets: [{id: a/gpt-4o, backend: a, deployment: gpt-4o-0806}]
rules:
  - {id: four-o, type: weight-based-routing, when: {models: [gpt-4o]}, load_balance_targets: [{target: a/gpt-4o}]}
)",
       a, b);
  p.start();
  auto azure = http_call(p.port(), "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=1", {},
                         R"({"model":"ignored","messages":[]})");
  EXPECT_EQ(azure.status, 200u);
  EXPECT_EQ(a.last_request().target, "/openai/deployments/gpt-4o-0806/chat/completions?api-version=1");
  EXPECT_EQ(a.last_request().body, R"({"model":"ignored","messages":[]})")
      << "an Azure path's body is not touched";

  const std::string body =
      R"({"messages":[{"role":"user","content":"model"}],"model":"gpt-4o","stream":false})";
  auto v1 = http_call(p.port(), "POST", "/openai/v1/chat/completions", {}, body);
  EXPECT_EQ(v1.status, 200u);
  EXPECT_EQ(a.last_request().target, "/openai/v1/chat/completions");
  const auto sent = nlohmann::json::parse(a.last_request().body);
  EXPECT_EQ(sent["model"], "gpt-4o-0806") << "Azure's v1 API reads the deployment from the body";
  EXPECT_EQ(sent["messages"][0]["content"], "model");
  EXPECT_EQ(a.last_request().header("content-length"), std::to_string(a.last_request().body.size()));

  auto other = http_call(p.port(), "POST", "/v1/chat/completions", {}, R"({"model":"gpt-5"})");
  EXPECT_EQ(other.status, 404u);
  EXPECT_NE(other.body.find("model_not_found"), std::string::npos);
  EXPECT_NE(other.body.find("gpt-5"), std::string::npos);
  EXPECT_EQ(a.request_count(), 2u) << "no rule, no backend call";
}

TEST(Rules, OverridesApplyPerTargetAndAFailoverStartsFromTheClientsBody) {
  MockBackend a([](const SeenRequest&) { return MockReply{429, {{"retry-after-ms", "5000"}}, "{}"}; });
  MockBackend b([](const SeenRequest&) { return ok("b"); });
  ProxyHarness p;
  load(p, std::string(kBackends) + R"(
targets: [{id: a/m, backend: a, model: model-a}, {id: b/m, backend: b}]
rules:
  - id: r
    type: priority-based-routing
    load_balance_targets:
      - {target: a/m, priority: 1, override_params: {temperature: 0.5, user: null, max_tokens: 800}}
      - {target: b/m, priority: 2}
)",
       a, b);
  p.start();
  const std::string body = R"({"model":"m","temperature":1,"user":"u-1","messages":[]})";
  auto r = http_call(p.port(), "POST", "/v1/chat/completions", {}, body);
  EXPECT_EQ(r.body, R"({"from":"b"})");
  const auto to_a = nlohmann::json::parse(a.last_request().body);
  EXPECT_EQ(to_a["temperature"], 0.5);
  EXPECT_EQ(to_a["max_tokens"], 800);
  EXPECT_FALSE(to_a.contains("user")) << "null removes the key";
  EXPECT_EQ(to_a["model"], "model-a");
  EXPECT_EQ(b.last_request().body, body) << "the next target starts again from the client's body";
  // The 429 cooled down (a, "m"): the state is kept under the model the client asked for.
  EXPECT_FALSE(p.server->states().available(p.server->snapshot()->rules[0].table.member(0), "m"));
}

// An event stream frees its request's texts once the client has the head (the edited body among
// them): the connection's next request is edited and sent whole again.
TEST(Rules, EachStreamOnAConnectionGetsItsOwnEditedBody) {
  const auto stream = [](const SeenRequest&) {
    return MockReply{200,
                     {{"content-type", "text/event-stream"}},
                     "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"};
  };
  MockBackend a(stream), b(stream);
  ProxyHarness p;
  load(p, std::string(kBackends) + R"(
targets: [{id: a/m, backend: a, model: model-a}]
rules:
  - {id: r, type: priority-based-routing, load_balance_targets: [{target: a/m, override_params: {temperature: 0.5}}]}
)",
       a, b);
  p.start();
  RawConnection c(p.port());
  std::size_t answered = 0;
  std::string received;
  for (const std::string user : {"first", "second"}) {
    const std::string body = R"({"model":"m","stream":true,"user":")" + user + R"(","messages":[]})";
    c.send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: "
        "application/json\r\ncontent-length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body);
    received = c.read_until("data: [DONE]", ++answered);
    const auto sent = nlohmann::json::parse(a.last_request().body);
    EXPECT_EQ(sent["model"], "model-a") << user;
    EXPECT_EQ(sent["temperature"], 0.5) << user;
    EXPECT_EQ(sent["user"], user);
  }
  EXPECT_EQ(received.find("HTTP/1.1 200"), 0u) << received;
  EXPECT_NE(received.find("HTTP/1.1 200", 1), std::string::npos) << "the second stream's head:\n" << received;
  EXPECT_EQ(a.request_count(), 2u);
}

TEST(Rules, FailureToleranceTakesATargetOutForItsCooldownPeriod) {
  MockBackend a([](const SeenRequest&) { return MockReply{500, {}, "{}"}; });
  MockBackend b([](const SeenRequest&) { return ok("b"); });
  LastRecord last;  // outlives the server
  ProxyHarness p;
  load(p, std::string(kBackends) + R"(
targets: [{id: a/m, backend: a}, {id: b/m, backend: b}]
rules:
  - id: r
    type: priority-based-routing
    load_balance_targets: [{target: a/m, priority: 1}, {target: b/m, priority: 2}]
model_configs:
  - {model: a/m, failure_tolerance: {allowed_failures_per_minute: 1, cooldown_period_minutes: 30}}
)",
       a, b);
  p.start(&last);
  const std::string path = "/openai/deployments/m/chat/completions?api-version=1";
  const routing::PoolMember& target_a = p.server->snapshot()->rules[0].table.member(0);
  EXPECT_EQ(http_call(p.port(), "POST", path, {}, "{}").body, R"({"from":"b"})");
  auto first = last.await();
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->attempts[0].breaker_tripped) << "one failure is allowed";
  p.clock.advance(std::chrono::seconds(11));  // past the 500's own cooldown
  EXPECT_TRUE(p.server->states().available(target_a, "m"));
  EXPECT_EQ(http_call(p.port(), "POST", path, {}, "{}").body, R"({"from":"b"})");
  auto second = last.await(2);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->attempts[0].cause, routing::FailureCause::ServerError);
  EXPECT_TRUE(second->attempts[0].breaker_tripped) << "the second failure in a minute trips it";
  const routing::CooldownView cooldown = p.server->states().deployment_cooldown(target_a, "m");
  EXPECT_EQ(cooldown.cause, routing::FailureCause::FailureTolerance);
  EXPECT_GE(cooldown.until - p.clock.now(), std::chrono::nanoseconds(std::chrono::minutes(29)).count());
  p.clock.advance(std::chrono::minutes(10));
  EXPECT_FALSE(p.server->states().available(target_a, "m")) << "out for the cooldown period, not 10 s";
  EXPECT_EQ(a.request_count(), 2u);
}

TEST(Rules, AReloadUnderContinuousTrafficLosesNoRequest) {
  MockBackend a([](const SeenRequest&) { return ok("a"); }), b([](const SeenRequest&) { return ok("b"); });
  ProxyHarness p;
  const std::string to_a =
      std::string(kBackends) +
      "targets: [{id: a/m, backend: a}]\n"
      "rules: [{id: r, type: weight-based-routing, load_balance_targets: [{target: a/m}]}]\n";
  const std::string to_b =
      std::string(kBackends) +
      "targets: [{id: b/m, backend: b}]\n"
      "rules: [{id: r, type: weight-based-routing, load_balance_targets: [{target: b/m}]}]\n";
  load(p, to_a, a, b);
  const config::Config first = p.cfg;
  load(p, to_b, a, b);
  const config::Config second = p.cfg;
  p.cfg = first;
  p.start();

  ContinuousTraffic traffic(p.port(), "/openai/deployments/m/chat/completions?api-version=1");
  for (int i = 0; i < 10; ++i) {
    p.server->reload(i % 2 == 0 ? second : first);
    ASSERT_TRUE(traffic.await_sent(traffic.sent() + 5)) << "traffic stalled after reload " << i;
  }
  traffic.stop();
  EXPECT_GE(traffic.sent(), 50);
  EXPECT_EQ(traffic.failed(), 0);
  EXPECT_GT(a.request_count(), 0u);
  EXPECT_GT(b.request_count(), 0u) << "the reloads took effect";
}

}  // namespace rules_test
}  // namespace smartlb::testing
