// The Responses API's WebSocket mode through smartlb (docs/stateful-apis.md), over real sockets
// on 127.0.0.1: smartlb-sim's server in this process is each resource (its own response store),
// Beast's WebSocket client the client. A chain of turns over the socket gets ids tagged with the
// socket's resource and finds them there again; the same ids work over HTTP; an id of another
// resource gets an error event and is not forwarded; a throttled handshake fails over; the
// turns' usage is counted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"
#include "websocket_sim.hpp"

namespace smartlb::testing {
namespace responses_socket_test {  // named, not anonymous: tests/CMakeLists.txt

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using nlohmann::json;

std::string create(const std::string& input, const std::string& previous = "") {
  json m = {{"type", "response.create"}, {"model", "gpt-4o"}, {"input", input}};
  if (!previous.empty()) m["previous_response_id"] = previous;
  return m.dump();
}

class ResponsesSocketTest : public ::testing::Test {
 protected:
  ~ResponsesSocketTest() override { proxy_.stop(); }
  void start() { proxy_.start(&records_); }
  // The tag the ids of backend `i`'s resource carry.
  std::string tag_of(std::size_t backend) {
    const auto snap = proxy_.server->snapshot();
    return std::string(snap->resources[snap->resource_of[backend]].tag.view());
  }
  // One turn: its events until response.completed (or an error).
  static std::vector<json> turn(WsClient& client, const std::string& message) {
    client.send(message);
    std::vector<json> events;
    while (events.size() < 20) {
      events.push_back(client.read_event());
      const std::string type = events.back()["type"];
      if (type == "response.completed" || type == "error") break;
    }
    return events;
  }

  ProxyHarness proxy_;
  LastRecord records_;
};

TEST_F(ResponsesSocketTest, AChainOverTheSocketStaysOnItsResourceAndContinuesOverHttp) {
  Sim a("sim-a", "key-a"), b("sim-b", "key-b");
  proxy_.add_backend("a", a.url(), 1, 1, "key-a");
  proxy_.add_backend("b", b.url(), 2, 1, "key-b");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response = client.handshake("/v1/responses", {{"authorization", "Bearer client-key"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response["x-smartlb-backend"], "a");

  std::string previous;
  json usage_sum = {{"input_tokens", 0}, {"output_tokens", 0}};
  for (int i = 0; i < 3; ++i) {
    const std::vector<json> events = turn(client, create("turn " + std::to_string(i), previous));
    ASSERT_EQ(events.back()["type"], "response.completed") << events.back().dump();
    EXPECT_EQ(events.front()["type"], "response.created");
    const json& r = events.back()["response"];
    const std::string id = r["id"];
    EXPECT_TRUE(id.ends_with(tag_of(0))) << id;
    EXPECT_EQ(events.front()["response"]["id"], id) << "every event's ids are tagged";
    if (!previous.empty()) {
      EXPECT_EQ(r["previous_response_id"], previous) << "tagged as the client sent it";
    }
    usage_sum["input_tokens"] = usage_sum["input_tokens"].get<int>() + r["usage"]["input_tokens"].get<int>();
    usage_sum["output_tokens"] =
        usage_sum["output_tokens"].get<int>() + r["usage"]["output_tokens"].get<int>();
    previous = id;
  }
  client.ws().close(websocket::close_code::normal, ec);
  EXPECT_FALSE(ec) << ec.message();
  const auto rec = records_.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 101u);
  EXPECT_EQ(rec->prompt_tokens, usage_sum["input_tokens"].get<int>());
  EXPECT_EQ(rec->completion_tokens, usage_sum["output_tokens"].get<int>());
  EXPECT_GT(rec->completion_tokens, 0);
  EXPECT_EQ(rec->deployment, "gpt-4o") << "the model the events named";

  const json seen = a.stats()["last_request_headers"];
  EXPECT_EQ(seen.value("authorization", ""), "Bearer key-a") << "the backend's key, not the client's";
  EXPECT_EQ(b.stats()["requests"], 0) << b.stats().dump();

  // The last id over HTTP: it finds its resource, and a turn chains on it.
  const HttpResponse got = http_call(proxy_.port(), "GET", "/v1/responses/" + previous);
  EXPECT_EQ(got.status, 200u) << got.body;
  EXPECT_EQ(got.header("x-smartlb-backend"), "a");
  EXPECT_EQ(json::parse(got.body)["id"], previous);
  const HttpResponse next =
      http_call(proxy_.port(), "POST", "/v1/responses", {{"content-type", "application/json"}},
                json{{"model", "gpt-4o"}, {"input", "more"}, {"previous_response_id", previous}}.dump());
  EXPECT_EQ(next.status, 200u) << next.body;
  EXPECT_EQ(json::parse(next.body)["previous_response_id"], previous);
}

// One turn over a socket opened at `path` (the learning policy's one backend): its response's
// tokens count against gpt-4o's declared quota, and its speed is one latency sample.
void expect_the_turn_counted_under_gpt_4o(ProxyHarness& proxy, LastRecord& records, const std::string& path) {
  Sim sim("sim-a", "key-a");
  ASSERT_EQ(use_learning_policy(proxy, sim), "");
  proxy.start(&records);
  WsClient client(proxy.port());
  ASSERT_TRUE(client.open(path));
  const std::int64_t before = quota_tokens_used(proxy);  // the handshake's own estimate
  EXPECT_EQ(latency_samples(proxy), 0u);
  client.send(create("hello"));
  json event;
  while ((event = client.read_event())["type"] != "response.completed")
    ASSERT_NE(event["type"], "error") << event.dump();
  const json usage = event["response"]["usage"];
  ASSERT_GT(usage["output_tokens"].get<int>(), 0);
  // The relay learns an event before it passes it on: no wait needed.
  EXPECT_EQ(quota_tokens_used(proxy) - before,
            usage["input_tokens"].get<std::int64_t>() + usage["output_tokens"].get<std::int64_t>());
  EXPECT_EQ(latency_samples(proxy), 1u) << "response.created to response.completed, per output token";
  beast::error_code ec;
  client.ws().close(websocket::close_code::normal, ec);
}

TEST_F(ResponsesSocketTest, EachCompletedResponseCountsAgainstTheDeclaredQuotaAndTeachesLatencyRouting) {
  expect_the_turn_counted_under_gpt_4o(proxy_, records_, "/v1/responses?model=gpt-4o");
}

// The handshake's `model` parameter is optional: each response then counts under the model
// its response.create asked for, as the same request over HTTP would (not under no model).
TEST_F(ResponsesSocketTest, WithoutAModelInTheHandshakeEachResponseCountsUnderTheModelItAskedFor) {
  expect_the_turn_counted_under_gpt_4o(proxy_, records_, "/v1/responses");
}

TEST_F(ResponsesSocketTest, AnIdOfAnotherResourceGetsAnErrorEventAndIsNotForwarded) {
  Sim a("sim-a", "key-a"), b("sim-b", "key-b");
  proxy_.add_backend("a", a.url(), 1, 1, "key-a");
  proxy_.add_backend("b", b.url(), 2, 1, "key-b");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  client.handshake("/openai/v1/responses", {{"api-key", "client-key"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  const json before = a.stats()["requests"];
  ASSERT_EQ(before, 1) << "the handshake";

  const std::string foreign = "resp_elsewhere" + tag_of(1);
  const std::vector<json> refused = turn(client, json{{"type", "response.create"},
                                                      {"model", "gpt-4o"},
                                                      {"input", "x"},
                                                      {"previous_response_id", foreign},
                                                      {"stream_id", "s7"}}
                                                     .dump());
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0]["type"], "error");
  EXPECT_EQ(refused[0]["stream_id"], "s7");
  EXPECT_EQ(refused[0]["error"]["code"], "resource_conflict");
  EXPECT_EQ(refused[0]["error"]["param"], "previous_response_id");
  EXPECT_EQ(a.stats()["requests"], before) << "nothing went to the backend";

  // The socket serves on.
  EXPECT_EQ(turn(client, create("fine")).back()["type"], "response.completed");
  client.ws().close(websocket::close_code::normal, ec);
}

TEST_F(ResponsesSocketTest, AThrottledHandshakeFailsOverAndTheIdsCarryTheServingResourcesTag) {
  Sim busy("sim-busy", "key-a", 429), free("sim-free", "key-b");
  proxy_.add_backend("busy", busy.url(), 1, 1, "key-a");
  proxy_.add_backend("free", free.url(), 2, 1, "key-b");
  start();
  WsClient client(proxy_.port());
  beast::error_code ec;
  const auto response = client.handshake("/v1/responses", {{"api-key", "client-key"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response["x-smartlb-backend"], "free");
  EXPECT_EQ(busy.stats()["by_status"]["429"], 1);
  const std::string id = turn(client, create("hi")).back()["response"]["id"];
  EXPECT_TRUE(id.ends_with(tag_of(1))) << id;
  client.ws().close(websocket::close_code::normal, ec);
}

}  // namespace responses_socket_test
}  // namespace smartlb::testing
