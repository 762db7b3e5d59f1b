// The admin API over real sockets: smartlb in-process in front of two scripted backends, the
// admin listener with tokens. The 401/403 matrix, every write endpoint, what a drain does to
// traffic and to a stream in flight, and the hostile cases (bodies too large, unknown backends,
// bad JSON, wrong methods, concurrent drains).
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "smartlb/admin/admin_access.hpp"
#include "smartlb/admin/admin_server.hpp"
#include "smartlb/config/config_env.hpp"
#include "smartlb/net/server.hpp"

namespace smartlb {
namespace admin_api_server_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;
using smartlb::testing::await_condition;
using smartlb::testing::GatePtr;
using smartlb::testing::Headers;
using smartlb::testing::http_call;
using smartlb::testing::HttpResponse;
using smartlb::testing::MockBackend;
using smartlb::testing::MockReply;
using smartlb::testing::RawConnection;
using smartlb::testing::SeenRequest;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01";
const std::string kRead = "r3ad-t0ken-0123456789";
const std::string kWrite = "wr1te-t0ken-0123456789";

MockReply answer(const std::string& who) {
  return {200,
          {{"Content-Type", "application/json"}},
          R"({"choices":[{"message":{"content":")" + who + R"("}}]})"};
}

struct AdminApiServer : ::testing::Test {
  void start(config::EnvMap extra = {}) {
    config::EnvMap env = {{"BACKEND_1_URL", east.url()},
                          {"BACKEND_1_NAME", "east"},
                          {"BACKEND_2_URL", west.url()},
                          {"BACKEND_2_NAME", "west"},
                          {"BACKEND_2_PRIORITY", "2"},
                          {"LISTEN_ADDRESS", "127.0.0.1"},
                          {"PORT", "0"},
                          {"THREADS", "2"},
                          {"ACCESS_LOG", "off"},
                          // The backends' request counts are the clients' requests: no health probes.
                          {"HEALTH_PROBE_SECONDS", "0"},
                          {"ADMIN_TOKENS", "read:" + kRead + ",write:" + kWrite}};
    for (auto& [k, v] : extra) env[k] = v;
    std::erase_if(env, [](const auto& kv) { return kv.second == "(unset)"; });
    auto loaded = config::load_config_from_env(env);
    ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0]);
    config = *loaded.config;
    metrics = std::make_unique<telemetry::Metrics>(
        std::vector<telemetry::Metrics::BackendInfo>{{"east", {}}, {"west", {}}});
    server = std::make_unique<net::Server>(config, net::ServerOptions{.observer = metrics.get()});
    server->start();
    admin::AdminOptions o{"127.0.0.1", 0};
    o.access = config.admin;
    admin = std::make_unique<admin::AdminServer>(*server, *metrics, o);
    admin->start();
  }
  void TearDown() override {
    if (admin) admin->stop();
    if (server) {
      server->request_stop();
      server->wait();
    }
  }

  HttpResponse call(const std::string& method, const std::string& target, const std::string& token = {},
                    const std::string& body = {}) {
    Headers h;
    if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
    return http_call(admin->port(), method, target, h, body);
  }
  HttpResponse chat(const std::string& body = R"({"messages":[]})") {
    return http_call(server->port(), "POST", kChat, {{"content-type", "application/json"}}, body);
  }
  std::string state_of(const std::string& backend) {
    return json::parse(call("GET", "/admin/backends/" + backend, kRead).body)["state"];
  }

  MockBackend east{[](const SeenRequest&) { return answer("east"); }};
  MockBackend west{[](const SeenRequest&) { return answer("west"); }};
  config::Config config;
  std::unique_ptr<telemetry::Metrics> metrics;
  std::unique_ptr<net::Server> server;
  std::unique_ptr<admin::AdminServer> admin;
};

TEST_F(AdminApiServer, TheTokenMatrix) {
  start();
  struct Case {
    std::string method, target;
    unsigned none, bad, read, write;
  };
  const Case cases[] = {
      {"GET", "/healthz", 200, 200, 200, 200},
      {"GET", "/readyz", 200, 200, 200, 200},
      {"GET", "/", 200, 200, 200, 200},
      {"GET", "/metrics", 401, 401, 200, 200},
      {"GET", "/status", 401, 401, 200, 200},
      {"GET", "/admin/whoami", 401, 401, 200, 200},
      {"GET", "/admin/backends", 401, 401, 200, 200},
      {"GET", "/nothing-here", 401, 401, 404, 404},
      {"POST", "/admin/backends/east/disable", 401, 401, 403, 200},
      {"POST", "/admin/backends/east/enable", 401, 401, 403, 200},
      {"POST", "/admin/backends/east/drain", 401, 401, 403, 200},
      {"POST", "/admin/backends/east/cooldown", 401, 401, 403, 200},
      {"DELETE", "/admin/backends/east/cooldown", 401, 401, 403, 200},
      {"POST", "/admin/backends/east/enable", 401, 401, 403, 200},
  };
  for (const Case& c : cases) {
    const std::string before = state_of("east");
    const HttpResponse none = call(c.method, c.target);
    EXPECT_EQ(none.status, c.none) << c.method << " " << c.target;
    if (none.status == 401) {
      EXPECT_EQ(none.header("www-authenticate").rfind("Bearer", 0), 0u) << c.target;
      EXPECT_EQ(json::parse(none.body)["error"]["type"], "unauthorized");
    }
    EXPECT_EQ(call(c.method, c.target, "not-our-token-0123456789").status, c.bad)
        << c.method << " " << c.target;
    const HttpResponse read = call(c.method, c.target, kRead);
    EXPECT_EQ(read.status, c.read) << c.method << " " << c.target;
    if (read.status == 403) {
      EXPECT_EQ(json::parse(read.body)["error"]["type"], "forbidden");
    }
    if (c.method == "POST" || c.method == "DELETE") {
      EXPECT_EQ(state_of("east"), before) << "a refused change changed nothing: " << c.target;
    }
    EXPECT_EQ(call(c.method, c.target, kWrite).status, c.write) << c.method << " " << c.target;
  }
}

TEST_F(AdminApiServer, WithoutTokensReadsAreOpenAndWritesRefusedSayingHowToEnableThem) {
  start({{"ADMIN_TOKENS", "(unset)"}});
  EXPECT_EQ(call("GET", "/status").status, 200u);
  EXPECT_EQ(call("GET", "/metrics").status, 200u);
  EXPECT_EQ(call("GET", "/admin/backends").status, 200u);
  const HttpResponse w = call("POST", "/admin/backends/east/drain", kWrite);
  EXPECT_EQ(w.status, 403u);
  EXPECT_NE(w.body.find("ADMIN_TOKENS"), std::string::npos) << w.body;
  EXPECT_EQ(chat().header("x-smartlb-backend"), "east");
}

TEST_F(AdminApiServer, MetricsOpenForScrapers) {
  start({{"ADMIN_METRICS_OPEN", "true"}});
  EXPECT_EQ(call("GET", "/metrics").status, 200u);
  EXPECT_EQ(call("GET", "/status").status, 401u);
}

TEST_F(AdminApiServer, DrainMovesTrafficAndEnableBringsItBack) {
  start();
  EXPECT_EQ(chat().header("x-smartlb-backend"), "east");
  const HttpResponse d = call("POST", "/admin/backends/east/drain", kWrite);
  ASSERT_EQ(d.status, 200u);
  EXPECT_EQ(d.header("content-type"), "application/json");
  const json body = json::parse(d.body);
  EXPECT_EQ(body["state"], "drained");
  EXPECT_EQ(body["set_by"], "write-1 (write, " + admin::token_fingerprint(kWrite) + ")");
  const std::size_t east_before = east.request_count();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(chat().header("x-smartlb-backend"), "west");
  EXPECT_EQ(east.request_count(), east_before);
  ASSERT_EQ(call("POST", "/admin/backends/east/enable", kWrite).status, 200u);
  EXPECT_EQ(chat().header("x-smartlb-backend"), "east");
}

TEST_F(AdminApiServer, StatusShowsWhatAnOperatorSetAndWho) {
  start();
  ASSERT_EQ(call("POST", "/admin/backends/east/drain", kWrite).status, 200u);
  ASSERT_EQ(call("POST", "/admin/backends/west/disable?deployment=gpt-4o", kWrite).status, 200u);
  const HttpResponse r = call("GET", "/status", kRead);
  ASSERT_EQ(r.status, 200u);
  const json status = json::parse(r.body);
  const json& east_status = status["backends"][0];
  ASSERT_EQ(east_status["name"], "east");
  EXPECT_EQ(east_status["admin_state"], "drained");
  ASSERT_EQ(east_status["admin"].size(), 1u);
  EXPECT_EQ(east_status["admin"][0]["set_by"], "write-1 (write, " + admin::token_fingerprint(kWrite) + ")");
  EXPECT_TRUE(east_status["admin"][0]["set_at"].is_string());
  const json& west_status = status["backends"][1];
  EXPECT_EQ(west_status["admin_state"], "enabled") << "only its deployment is out";
  ASSERT_EQ(west_status["admin"].size(), 1u);
  EXPECT_EQ(west_status["admin"][0]["deployment"], "gpt-4o");
  EXPECT_EQ(west_status["admin"][0]["state"], "disabled");
  EXPECT_EQ(r.body.find(kWrite), std::string::npos) << "a token in /status";

  ASSERT_EQ(call("POST", "/admin/backends/east/enable", kWrite).status, 200u);
  const json after = json::parse(call("GET", "/status", kRead).body);
  EXPECT_EQ(after["backends"][0]["admin_state"], "enabled");
  EXPECT_TRUE(after["backends"][0]["admin"].empty());
}

TEST_F(AdminApiServer, EveryBackendDrainedIsAnHonest503) {
  start();
  call("POST", "/admin/backends/east/drain", kWrite);
  call("POST", "/admin/backends/west/disable", kWrite);
  const HttpResponse r = chat();
  EXPECT_EQ(r.status, 503u);
  EXPECT_FALSE(r.has_header("retry-after")) << "nobody knows when an operator brings one back";
  const json e = json::parse(r.body)["error"];
  EXPECT_EQ(e["code"], "no_backend_available");
  EXPECT_EQ(e["message"], "Every backend for deployment 'gpt-4o' is drained or disabled by an operator.");
  call("POST", "/admin/backends/west/enable", kWrite);
  EXPECT_EQ(chat().header("x-smartlb-backend"), "west");
}

TEST_F(AdminApiServer, ADrainLetsAStreamInFlightFinishAndIsDrainedAfterIt) {
  GatePtr gate = east.make_gate();
  east.set_handler([&](const SeenRequest&) {
    MockReply r{200, {{"Content-Type", "text/event-stream"}}, ""};
    r.events = {"data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n",
                "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n", "data: [DONE]\n\n"};
    r.wait_before[1] = gate;
    return r;
  });
  start();
  auto stream = std::async(std::launch::async, [&] { return chat(R"({"stream":true,"messages":[]})"); });
  ASSERT_TRUE(await_condition(
      [&] { return server->states().in_flight(server->snapshot()->table.member(0).id) == 1; }));
  json d = json::parse(call("POST", "/admin/backends/east/drain", kWrite).body);
  EXPECT_EQ(d["state"], "draining");
  EXPECT_EQ(d["in_flight"], 1);
  EXPECT_EQ(chat().header("x-smartlb-backend"), "west") << "no new request goes to a draining backend";
  EXPECT_EQ(state_of("east"), "draining");
  east.open(gate);
  const HttpResponse s = stream.get();
  EXPECT_EQ(s.status, 200u);
  EXPECT_NE(s.body.find("data: [DONE]"), std::string::npos) << "the stream finished whole";
  EXPECT_TRUE(await_condition([&] { return state_of("east") == "drained"; }));
}

TEST_F(AdminApiServer, AHeldCooldownAndItsLift) {
  start();
  json h = json::parse(
      call("POST", "/admin/backends/east/cooldown?deployment=gpt-4o", kWrite, R"({"seconds":600})").body);
  EXPECT_EQ(h["state"], "held");
  EXPECT_LE(h["hold"]["remaining_ms"].get<std::int64_t>(), 600'000) << "counted from when it was set";
  EXPECT_GT(h["hold"]["remaining_ms"].get<std::int64_t>(), 0);
  EXPECT_EQ(chat().header("x-smartlb-backend"), "west");
  json l = json::parse(call("DELETE", "/admin/backends/east/cooldown?deployment=gpt-4o", kWrite).body);
  EXPECT_EQ(l["state"], "enabled");
  EXPECT_EQ(chat().header("x-smartlb-backend"), "east");
}

TEST_F(AdminApiServer, DeleteLiftsTheCooldownA429Set) {
  std::atomic<bool> throttle{true};
  east.set_handler([&](const SeenRequest&) {
    if (throttle) return MockReply{429, {{"Retry-After", "300"}}, R"({"error":{"message":"slow down"}})"};
    return answer("east");
  });
  start();
  EXPECT_EQ(chat().header("x-smartlb-backend"), "west");
  throttle = false;
  EXPECT_EQ(chat().header("x-smartlb-backend"), "west") << "cooling for 300 s";
  const json l = json::parse(call("DELETE", "/admin/backends/east/cooldown", kWrite).body);
  EXPECT_EQ(l["cooldown_remaining_ms"], 0);
  EXPECT_EQ(chat().header("x-smartlb-backend"), "east");
}

TEST_F(AdminApiServer, ReloadedTokensApplyToTheNextRequest) {
  start();
  ASSERT_EQ(call("GET", "/status", kRead).status, 200u);
  const std::string rotated = "r0tated-t0ken-0123456789";
  config::AdminConfig next;
  next.tokens.push_back({"rotated", config::AdminRole::Write, rotated});
  admin->set_access(next);
  EXPECT_EQ(call("GET", "/status", kRead).status, 401u) << "the old token is gone";
  EXPECT_EQ(call("POST", "/admin/backends/east/drain", kWrite).status, 401u);
  EXPECT_EQ(call("POST", "/admin/backends/east/drain", rotated).status, 200u);
  admin->set_access({});
  EXPECT_EQ(call("GET", "/status").status, 200u) << "no tokens: reading is open";
  EXPECT_EQ(call("POST", "/admin/backends/east/enable", rotated).status, 403u) << "and changes are off";
}

TEST_F(AdminApiServer, AReloadKeepsTheSettingsOfBackendsThatRemain) {
  start();
  call("POST", "/admin/backends/east/drain", kWrite);
  call("POST", "/admin/backends/west/cooldown", kWrite);
  server->reload(config);
  EXPECT_EQ(state_of("east"), "drained");
  EXPECT_EQ(state_of("west"), "held");
  config::EnvMap only_east = {{"BACKEND_1_URL", east.url()}, {"BACKEND_1_NAME", "east"}};
  server->reload(*config::load_config_from_env(only_east).config);
  EXPECT_EQ(call("GET", "/admin/backends/west", kRead).status, 404u) << "west is gone";
  server->reload(config);
  EXPECT_EQ(state_of("west"), "enabled") << "added back: nothing held any more";
  EXPECT_EQ(state_of("east"), "drained");
}

TEST_F(AdminApiServer, Hostile_BodiesTooLargeAre413AndTheConnectionCloses) {
  start();
  for (const std::string& token : {kWrite, std::string()}) {
    RawConnection c(admin->port());
    std::string req = "POST /admin/backends/east/cooldown HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n";
    if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
    c.send(req + "\r\n" + std::string(1000, '{'));
    const std::string got = c.read_until_close();
    EXPECT_EQ(got.rfind(token.empty() ? "HTTP/1.1 401" : "HTTP/1.1 413", 0), 0u) << got;
    EXPECT_TRUE(c.peer_closed()) << "the rest of the body is never read";
  }
  RawConnection chunked(admin->port());
  chunked.send(
      "POST /admin/backends/east/cooldown HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Authorization: Bearer " +
      kWrite + "\r\n\r\n2000\r\n" + std::string(0x2000, ' ') + "\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.read_until_close().rfind("HTTP/1.1 413", 0), 0u);
  RawConnection big_head(admin->port());
  big_head.send("GET /status HTTP/1.1\r\nHost: x\r\nX-Junk: " + std::string(20'000, 'a') + "\r\n\r\n");
  EXPECT_EQ(big_head.read_until_close().rfind("HTTP/1.1 431", 0), 0u);
  EXPECT_EQ(state_of("east"), "enabled");
}

TEST_F(AdminApiServer, Hostile_UnknownBackendsBadJsonAndWrongMethods) {
  start();
  EXPECT_EQ(call("POST", "/admin/backends/north/drain", kWrite).status, 404u);
  EXPECT_EQ(call("POST", "/admin/backends/%2e%2e/drain", kWrite).status, 404u);
  EXPECT_EQ(call("POST", "/admin/backends/east/cooldown", kWrite, "{\"seconds\":").status, 400u);
  EXPECT_EQ(call("POST", "/admin/backends/east/cooldown", kWrite, R"({"seconds":"soon"})").status, 400u);
  EXPECT_EQ(call("POST", "/admin/backends/east/drain?deployment=a%0d%0ab", kWrite).status, 400u);
  const HttpResponse get = call("GET", "/admin/backends/east/drain", kWrite);
  EXPECT_EQ(get.status, 405u);
  EXPECT_EQ(get.header("allow"), "POST");
  const HttpResponse put = call("PUT", "/admin/backends/east/cooldown", kWrite);
  EXPECT_EQ(put.status, 405u);
  EXPECT_EQ(put.header("allow"), "POST, DELETE");
  const HttpResponse post_status = call("POST", "/status", kWrite);
  EXPECT_EQ(post_status.status, 405u);
  EXPECT_EQ(post_status.header("allow"), "GET, HEAD");
  EXPECT_EQ(state_of("east"), "enabled");
}

TEST_F(AdminApiServer, Hostile_ConcurrentDrainsAndEnablesAllAnsweredAndTheLastWins) {
  start();
  std::vector<std::thread> clients;
  std::atomic<int> answered{0}, wrong{0};
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const std::string action = (t + i) % 2 ? "drain" : "enable";
        const std::string target =
            "/admin/backends/east/" + action + (t % 4 == 0 ? "?deployment=d" + std::to_string(i % 3) : "");
        const HttpResponse r = call("POST", target, kWrite);
        (r.status == 200 ? answered : wrong).fetch_add(1);
      }
    });
  std::atomic<bool> stop{false};
  std::thread traffic([&] {
    while (!stop) chat();
  });
  for (auto& c : clients) c.join();
  stop = true;
  traffic.join();
  EXPECT_EQ(answered.load(), 200);
  EXPECT_EQ(wrong.load(), 0);
  ASSERT_EQ(call("POST", "/admin/backends/east/drain", kWrite).status, 200u);
  EXPECT_EQ(state_of("east"), "drained") << "nothing left in flight once the clients are done";
  ASSERT_EQ(call("POST", "/admin/backends/east/enable", kWrite).status, 200u);
  EXPECT_EQ(state_of("east"), "enabled");
}

}  // namespace admin_api_server_test
}  // namespace smartlb
