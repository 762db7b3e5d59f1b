// Integration: realtime WebSocket sessions and large bodies against a real SimServer on
// 127.0.0.1:0 in this process, with Beast's WebSocket client.

#include "smartlb/sim/sim_server.hpp"

#include "await_condition.hpp"
#include "http_test_client.hpp"

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_server_realtime_test {  // named, not anonymous: tests/CMakeLists.txt

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using nlohmann::json;
using test::HttpTestClient;

class WsClient {
 public:
  explicit WsClient(std::uint16_t port) : ws_(io_) {
    ws_.next_layer().connect({net::ip::make_address("127.0.0.1"), port});
  }

  /// The handshake's answer (101, or the refusal); `headers` go on the request.
  websocket::response_type handshake(const std::string& target,
                                     const std::vector<std::pair<std::string, std::string>>& headers,
                                     beast::error_code& ec) {
    ws_.set_option(websocket::stream_base::decorator([headers](websocket::request_type& request) {
      for (const auto& [name, value] : headers) request.set(name, value);
    }));
    websocket::response_type response;
    ws_.handshake(response, "127.0.0.1", target, ec);
    return response;
  }

  json read_event() {
    beast::flat_buffer buffer;
    ws_.read(buffer);
    EXPECT_TRUE(ws_.got_text());
    return json::parse(beast::buffers_to_string(buffer.data()));
  }
  void send(const std::string& text) {
    ws_.text(true);
    ws_.write(net::buffer(text));
  }

  websocket::stream<net::ip::tcp::socket>& ws() { return ws_; }

 private:
  net::io_context io_;
  websocket::stream<net::ip::tcp::socket> ws_;
};

class SimServerRealtimeTest : public ::testing::Test {
 protected:
  SimServerRealtimeTest() {
    settings_.name = "rt";
    settings_.api_key = "k1";
    settings_.stream_chunks = 2;
  }
  ~SimServerRealtimeTest() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  std::uint16_t start(std::size_t max_body_bytes = 32 * 1024 * 1024) {
    engine_ = std::make_unique<SimEngine>(settings_, clock_);
    server_ = std::make_unique<SimServer>(*engine_, ServerOptions{"127.0.0.1", 0, 1, false, max_body_bytes});
    thread_ = std::thread([this] { server_->run(); });
    return server_->port();
  }
  /// Waits (bounded) until the server has seen the session end.
  bool sessions_closed() {
    return smartlb::testing::await_condition([&] { return engine_->stats_json()["realtime"]["open"] == 0; });
  }

  SimSettings settings_;
  SystemClock clock_;
  std::unique_ptr<SimEngine> engine_;
  std::unique_ptr<SimServer> server_;
  std::thread thread_;
};

TEST_F(SimServerRealtimeTest, ASessionOverWebSocketAnswersEventsAndPings) {
  WsClient client(start());
  beast::error_code ec;
  const auto response = client.handshake("/openai/v1/realtime?model=gpt-4o", {{"api-key", "k1"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 101);
  EXPECT_EQ(response["x-sim-name"], "rt");
  EXPECT_EQ(response[beast::http::field::sec_websocket_extensions], "")
      << "no compression: frames stay readable";
  EXPECT_EQ(client.read_event()["type"], "session.created");

  bool pong = false;
  client.ws().control_callback([&](websocket::frame_type kind, beast::string_view) {
    pong = pong || kind == websocket::frame_type::pong;
  });
  client.ws().ping("p");
  client.send(
      R"({"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}})");
  EXPECT_EQ(client.read_event()["type"], "conversation.item.created");
  EXPECT_TRUE(pong) << "the ping was answered before the event";

  client.send(R"({"type":"response.create"})");
  std::vector<std::string> types;
  json done;
  while (types.size() < 20 && done.is_null()) {
    const json event = client.read_event();
    types.push_back(event["type"]);
    if (types.back() == "response.done") done = event;
  }
  ASSERT_FALSE(done.is_null()) << "response.done within 20 events";
  EXPECT_EQ(std::count(types.begin(), types.end(), "response.output_text.delta"), 2);
  EXPECT_EQ(done["response"]["usage"]["output_tokens"], 2);

  client.ws().close(websocket::close_code::normal);
  ASSERT_TRUE(sessions_closed());
  const json stats = engine_->stats_json();
  EXPECT_EQ(stats["realtime"]["sessions"], 1);
  EXPECT_EQ(stats["realtime"]["client_messages"], 2);
  EXPECT_EQ(stats["by_status"]["101"], 1);
  EXPECT_EQ(stats["last_request_headers"]["upgrade"], "websocket");
  EXPECT_GT(stats["deployments"]["gpt-4o"]["tokens_served"], 0);
}

TEST_F(SimServerRealtimeTest, TheKeySubprotocolIsAcceptedAndRealtimeIsChosen) {
  WsClient client(start());
  beast::error_code ec;
  const auto response = client.handshake(
      "/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-4o",
      {{"sec-websocket-protocol", "realtime, openai-insecure-api-key.k1, openai-beta.realtime-v1"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response[beast::http::field::sec_websocket_protocol], "realtime");
  EXPECT_EQ(client.read_event()["type"], "session.created");
}

TEST_F(SimServerRealtimeTest, ARefusedHandshakeIsAnHttpAnswerWithRetryAfter) {
  const auto port = start();
  HttpTestClient web(port);
  ASSERT_EQ(
      web.request("POST", "/_sim/faults", R"({"force_status":429,"force_retry_after_ms":60000})").status,
      200);
  WsClient client(port);
  beast::error_code ec;
  const auto response = client.handshake("/v1/realtime?model=gpt-4o", {{"api-key", "k1"}}, ec);
  EXPECT_TRUE(ec) << "no upgrade";
  EXPECT_EQ(response.result_int(), 429);
  EXPECT_EQ(response["retry-after"], "60");
  EXPECT_EQ(response["retry-after-ms"], "60000");

  WsClient wrong_key(port);
  EXPECT_EQ(wrong_key.handshake("/v1/realtime?model=gpt-4o", {{"api-key", "nope"}}, ec).result_int(), 401);
}

TEST_F(SimServerRealtimeTest, EchoModeSendsEveryMessageBackAtOnce) {
  settings_.realtime_echo = true;
  WsClient client(start());
  beast::error_code ec;
  client.handshake("/v1/realtime?model=gpt-4o", {{"api-key", "k1"}}, ec);
  ASSERT_FALSE(ec) << ec.message();
  for (const std::size_t size : {1u, 125u, 126u, 70'000u}) {
    const std::string payload(size, 'e');
    client.ws().binary(size % 2 == 0);
    client.ws().write(net::buffer(payload));
    beast::flat_buffer buffer;
    client.ws().read(buffer);
    EXPECT_EQ(client.ws().got_binary(), size % 2 == 0) << size;
    EXPECT_EQ(beast::buffers_to_string(buffer.data()), payload)
        << "no session.created first, same bytes back";
  }
  client.ws().close(websocket::close_code::normal);
  ASSERT_TRUE(sessions_closed());
  EXPECT_EQ(engine_->stats_json()["realtime"]["server_messages"], 4);
}

TEST_F(SimServerRealtimeTest, APlainGetOnTheRealtimePathIs426) {
  HttpTestClient web(start());
  const auto result = web.request("GET", "/v1/realtime?model=gpt-4o", "", {{"api-key", "k1"}});
  EXPECT_EQ(result.status, 426);
  EXPECT_EQ(result.header("upgrade"), "websocket");
}

TEST_F(SimServerRealtimeTest, ABodyOverMaxBodyBytesIs413) {
  HttpTestClient web(start(1000));
  const auto result = web.request("POST", "/v1/files", std::string(2000, 'x'), {{"api-key", "k1"}});
  EXPECT_EQ(result.status, 413);
  EXPECT_EQ(result.header("x-sim-name"), "rt");
}

}  // namespace sim_server_realtime_test
}  // namespace smartlb::sim
