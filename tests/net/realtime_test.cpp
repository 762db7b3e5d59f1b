// Realtime over WebSocket through smartlb (docs/stateful-apis.md, Realtime), over real sockets
// on 127.0.0.1: smartlb-sim's server in this process is each backend, Beast's WebSocket client
// the client. The handshake goes through with the backend's key and smartlb's own
// Sec-WebSocket-Key, a refused one fails over before the client sees it, frames pass both ways,
// closes are relayed, response.done's usage is counted, and smartlb closes sessions itself when
// idle or draining.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"
#include "smartlb/routing/token_estimate.hpp"
#include "smartlb/websocket/handshake.hpp"
#include "websocket_sim.hpp"

namespace smartlb::testing {
namespace realtime_test {  // named, not anonymous: tests/CMakeLists.txt

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using nlohmann::json;

constexpr const char* kItem =
    R"({"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}})";

class RealtimeTest : public ::testing::Test {
 protected:
  ~RealtimeTest() override { proxy_.stop(); }
  void start() { proxy_.start(&records_); }

  // A client "app" (key app-key-1) with `limits`.
  void add_app(const config::ClientLimits& limits) {
    config::ClientConfig app;
    app.name = "app";
    app.key = "app-key-1";
    app.limits = limits;
    proxy_.cfg.policy.clients.push_back(app);
  }
  // A chat from "app" (its prompt estimated at one token) asking for `max_tokens`: its status.
  unsigned app_chat(std::int64_t max_tokens = 1) {
    return http_call(proxy_.port(), "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=1",
                     {{"api-key", "app-key-1"}, {"content-type", "application/json"}},
                     R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":)" +
                         std::to_string(max_tokens) + "}")
        .status;
  }

  ProxyHarness proxy_;
  LastRecord records_;
};

TEST_F(RealtimeTest, ASessionRelaysFramesBothWaysWithTheBackendsKeyAndCountsItsUsage) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response = client.handshake(
      "/openai/v1/realtime?model=gpt-4o",
      {{"authorization", "Bearer client-key"}, {"sec-websocket-extensions", "permessage-deflate"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 101);
  EXPECT_EQ(response["x-smartlb-backend"], "a");
  EXPECT_EQ(response["x-sim-name"], "sim-a");
  EXPECT_EQ(client.read_event()["type"], "session.created");
  const auto sessions = [&] {
    return proxy_.server->states().websocket_sessions(proxy_.server->snapshot()->table.member(0).id);
  };
  EXPECT_EQ(sessions(), 1) << "the open session counts on its backend (/status, metrics)";
  const auto in_flight = [&] {
    return proxy_.server->states().in_flight(proxy_.server->snapshot()->table.member(0).id);
  };
  EXPECT_EQ(in_flight(), 1) << "and in flight there until it ends: an admin drain waits for it";

  bool pong = false;
  client.ws().control_callback([&](websocket::frame_type kind, beast::string_view payload) {
    pong = pong || (kind == websocket::frame_type::pong && payload == "p");
  });
  client.ws().ping("p");
  client.send(kItem);
  EXPECT_EQ(client.read_event()["type"], "conversation.item.created");
  EXPECT_TRUE(pong) << "the ping went through and its pong came back";
  client.send(R"({"type":"response.create"})");
  const std::vector<json> events = client.read_until("response.done");
  ASSERT_EQ(events.back()["type"], "response.done");
  const json usage = events.back()["response"]["usage"];
  client.send(R"({"type":"response.create"})");
  const json second = client.read_until("response.done").back()["response"]["usage"];

  client.ws().close(websocket::close_code::normal, ec);  // returns once the answering close came
  EXPECT_FALSE(ec) << "the backend's close answer came back: " << ec.message();
  ASSERT_TRUE(sim.sessions_closed());
  EXPECT_TRUE(await_condition([&] { return sessions() == 0; }));
  EXPECT_TRUE(await_condition([&] { return in_flight() == 0; }));

  const json stats = sim.stats();
  EXPECT_EQ(stats["realtime"]["client_messages"], 3);
  const json& seen = stats["last_request_headers"];
  EXPECT_EQ(seen["api-key"], "key-a") << seen.dump();
  EXPECT_FALSE(seen.contains("authorization")) << "the client's credential stays with smartlb";
  EXPECT_FALSE(seen.contains("sec-websocket-extensions")) << "no compression: frames stay readable";

  const auto rec = records_.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 101u);
  EXPECT_EQ(rec->prompt_tokens, usage["input_tokens"].get<int>() + second["input_tokens"].get<int>());
  EXPECT_EQ(rec->completion_tokens, usage["output_tokens"].get<int>() + second["output_tokens"].get<int>());
  EXPECT_GT(rec->completion_tokens, 0);
}

TEST_F(RealtimeTest, EachResponseCountsAgainstTheDeclaredQuotaAndTeachesLatencyRoutingAsItEnds) {
  // The session stays open: what its responses used is learnt as each ends, not at its end.
  Sim sim("sim-a", "key-a");
  ASSERT_EQ(use_learning_policy(proxy_, sim), "");
  start();
  WsClient client(proxy_.port());
  ASSERT_TRUE(client.open_realtime());
  const auto used = [&] { return quota_tokens_used(proxy_); };
  const auto samples = [&] { return latency_samples(proxy_); };
  const std::int64_t before = used();  // the handshake's own estimate
  EXPECT_EQ(samples(), 0u);

  client.send(kItem);
  client.read_until("conversation.item.created");
  client.send(R"({"type":"response.create"})");
  const json usage = client.read_until("response.done").back()["response"]["usage"];
  const std::int64_t spent =
      usage["input_tokens"].get<std::int64_t>() + usage["output_tokens"].get<std::int64_t>();
  ASSERT_GT(usage["output_tokens"].get<int>(), 0);
  // The relay learns an event before it passes it on: no wait needed.
  EXPECT_EQ(used() - before, spent);
  EXPECT_EQ(samples(), 1u) << "response.created to response.done, per output token";
  client.ws().close(websocket::close_code::normal);
}

// max_in_flight counts a session while one of its responses is in progress, not while it idles.
TEST_F(RealtimeTest, ASessionHoldsAnInFlightSlotOnlyWhileAResponseIsInProgress) {
  Sim sim("sim-a", "key-a", 0, std::chrono::seconds(120));  // a response's deltas 120 s apart
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  add_app({.max_in_flight = 1});
  start();
  const auto chat = [&] { return app_chat(); };
  WsClient client(proxy_.port());
  ASSERT_TRUE(client.open("/openai/v1/realtime?model=gpt-4o", {{"api-key", "app-key-1"}}));
  EXPECT_EQ(client.read_event()["type"], "session.created");
  EXPECT_EQ(chat(), 200u) << "an idle session holds no slot";
  client.send(kItem);
  client.read_until("conversation.item.created");
  client.send(R"({"type":"response.create"})");
  client.read_until("response.created");  // the relay learns an event before it passes it on
  EXPECT_EQ(chat(), 429u) << "a response in progress holds the caller's one slot";
  client.ws().next_layer().close();  // the client leaves mid-response
  ASSERT_TRUE(records_.await(3)) << "the session ended";
  EXPECT_EQ(chat(), 200u) << "its slot was given back";
}

// The session's usage is charged to the caller's token budget when it ends, as an HTTP answer's
// is: its handshake was admitted on an estimate, and the session's end settles it (once its job
// is gone: the session carries what its end needs).
TEST_F(RealtimeTest, ASessionsUsageIsChargedToTheCallersTokenBudgetWhenItEnds) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  add_app({.tokens_per_minute = 1000});
  start();
  {
    WsClient client(proxy_.port());
    ASSERT_TRUE(client.open("/openai/v1/realtime?model=gpt-4o", {{"api-key", "app-key-1"}}));
    EXPECT_EQ(client.read_event()["type"], "session.created");
    client.send(kItem);
    client.read_until("conversation.item.created");
    client.send(R"({"type":"response.create"})");
    client.read_until("response.done");
    beast::error_code ec;
    client.ws().close(websocket::close_code::normal, ec);
  }
  const auto rec = records_.await();
  ASSERT_TRUE(rec);
  const std::int64_t used = rec->prompt_tokens + rec->completion_tokens;
  ASSERT_GT(used, 0);
  ASSERT_NE(used, routing::kDefaultMaxTokensEstimate) << "the test tells the usage from the estimate";
  // A chat estimated at one token more than the session left when charged what it used is
  // refused; one estimated at exactly that is served. The handshake's estimate alone would leave
  // 1000 - 16, and answer the other way.
  const std::int64_t left = 1000 - used;
  const bool over = left < 1000 - routing::kDefaultMaxTokensEstimate;
  EXPECT_EQ(app_chat((over ? left + 1 : left) - 1), over ? 429u : 200u) << used << " tokens used";
}

TEST_F(RealtimeTest, TheClients101KeepsTheBackendsFieldsButThoseOfOneBackendAndSmartlbsOwn) {
  // As for any answer: the backend's per-backend quota headers stay here, and x-smartlb-backend
  // and x-request-id are smartlb's (once each), whatever the backend wrote.
  MockBackend backend([](const SeenRequest& s) {
    MockReply r;
    r.raw =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: " +
        smartlb::websocket::accept_for(s.header("sec-websocket-key")) +
        "\r\nx-ratelimit-remaining-tokens: 5\r\nx-smartlb-backend: spoofed\r\n"
        "x-request-id: theirs\r\nx-ms-region: eastus\r\n\r\n";
    return r;
  });
  proxy_.add_backend("a", backend.url(), 1, 1, "key-a");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response = client.handshake("/openai/v1/realtime?model=gpt-4o", {}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.count("x-ratelimit-remaining-tokens"), 0u);
  EXPECT_EQ(response.count("x-smartlb-backend"), 1u);
  EXPECT_EQ(response["x-smartlb-backend"], "a");
  EXPECT_EQ(response.count("x-request-id"), 1u);
  EXPECT_NE(response["x-request-id"], "theirs");
  EXPECT_EQ(response["x-ms-region"], "eastus") << "other fields pass";
  client.ws().next_layer().close();
}

TEST_F(RealtimeTest, AThrottledHandshakeFailsOverBeforeTheClientSeesIt) {
  Sim busy("sim-busy", "key-a", 429), free("sim-free", "key-b");
  proxy_.add_backend("busy", busy.url(), 1, 1, "key-a");
  proxy_.add_backend("free", free.url(), 2, 1, "key-b");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response = client.handshake("/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-4o",
                                         {{"api-key", "client-key"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response["x-smartlb-backend"], "free");
  EXPECT_EQ(client.read_event()["type"], "session.created");
  EXPECT_EQ(busy.stats()["by_status"]["429"], 1);
  EXPECT_FALSE(proxy_.available(0, "gpt-4o")) << "the throttled backend cools down as for HTTP";
  EXPECT_EQ(free.stats()["last_request_headers"]["api-key"], "key-b");
  client.ws().close(websocket::close_code::normal);
}

TEST_F(RealtimeTest, ABrowsersKeyInTheSubprotocolOrQueryIsReplacedByTheBackends) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response =
      client.handshake("/v1/realtime?model=gpt-4o&api-key=client-key",
                       {{"sec-websocket-protocol", "realtime, openai-insecure-api-key.client-key"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response[beast::http::field::sec_websocket_protocol], "realtime");
  const json seen = sim.stats()["last_request_headers"];
  EXPECT_EQ(seen.value("authorization", ""), "Bearer key-a") << seen.dump();  // a v1 path: Bearer
  EXPECT_EQ(seen.value("sec-websocket-protocol", ""), "realtime") << "the key's entry is not forwarded";
  EXPECT_EQ(seen.dump().find("client-key"), std::string::npos) << seen.dump();
  client.ws().close(websocket::close_code::normal);
}

TEST_F(RealtimeTest, ARefusalThatIsNotAFailoverReachesTheClientAsHttp) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response = client.handshake("/openai/realtime?deployment=gpt-4o", {}, ec);  // no api-version
  EXPECT_EQ(ec, websocket::error::upgrade_declined);
  EXPECT_EQ(response.result_int(), 400);
  EXPECT_TRUE(proxy_.available(0, "gpt-4o"));
}

TEST_F(RealtimeTest, AnIdleSessionIsClosedWithGoingAwayBothWays) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  proxy_.cfg.realtime_idle_timeout = std::chrono::seconds(1);
  start();
  WsClient client(proxy_.port());
  ASSERT_TRUE(client.open_realtime());
  beast::error_code ec;
  beast::flat_buffer rest;
  client.ws().read(rest, ec);  // nothing more is sent: smartlb's close comes
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(client.ws().reason().code, websocket::close_code::going_away);
  EXPECT_TRUE(sim.sessions_closed()) << "the backend was closed too";
}

TEST_F(RealtimeTest, ASessionIsClosedWhenItsMaximumLengthPassesEvenWhileBusy) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  proxy_.cfg.realtime_max_session = std::chrono::seconds(1);
  start();
  WsClient client(proxy_.port());
  ASSERT_TRUE(client.open_realtime());
  beast::error_code ec;
  // Busy (never idle) until smartlb's close arrives instead of an answer; bounded in count and
  // time (the limit is 1 s).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0; i < 1'000'000 && !ec && std::chrono::steady_clock::now() < give_up; ++i) {
    client.send(kItem);
    beast::flat_buffer answer;
    client.ws().read(answer, ec);
  }
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(client.ws().reason().code, websocket::close_code::going_away);
  EXPECT_TRUE(sim.sessions_closed());
}

TEST_F(RealtimeTest, ASessionTheClientDropsIsNoFailureOfTheBackend) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  start();
  {
    WsClient client(proxy_.port());
    beast::error_code ec;
    client.handshake("/openai/v1/realtime?model=gpt-4o", {}, ec);
    ASSERT_FALSE(ec) << ec.message();
    client.ws().next_layer().close();  // gone before any answer, without a close frame
  }
  ASSERT_TRUE(sim.sessions_closed()) << "the backend's side was closed too";
  ASSERT_TRUE(records_.await());
  EXPECT_TRUE(proxy_.available(0, "gpt-4o"));
  EXPECT_EQ(proxy_.backend_cooldown(0).cause, routing::FailureCause::None);
}

TEST_F(RealtimeTest, ADrainClosesOpenSessionsWithGoingAway) {
  Sim sim("sim-a", "key-a");
  proxy_.add_backend("a", sim.url(), 1, 1, "key-a");
  start();
  WsClient client(proxy_.port());
  ASSERT_TRUE(client.open_realtime());
  beast::error_code ec;
  proxy_.server->request_stop();
  beast::flat_buffer rest;
  client.ws().read(rest, ec);
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(client.ws().reason().code, websocket::close_code::going_away);
  EXPECT_TRUE(sim.sessions_closed());
  proxy_.server->wait();
}

}  // namespace realtime_test
}  // namespace smartlb::testing
