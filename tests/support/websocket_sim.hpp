#pragma once
// For WebSocket integration tests: smartlb-sim's server in this process as a backend (one
// resource, its own thread), a blocking Beast WebSocket client, and what routing learns from a
// session (a declared quota's count, latency samples).
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/websocket.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "await_condition.hpp"
#include "proxy_harness.hpp"
#include "smartlb/sim/sim_server.hpp"

namespace smartlb::testing {

namespace ws_sim_detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using nlohmann::json;
// One simulated resource, served on its own thread.
class Sim {
 public:
  // `chunk_interval`: before each content event (a response's deltas), so that a response stays
  // in progress that long.
  Sim(const std::string& name, const std::string& key, int force_status = 0,
      std::chrono::milliseconds chunk_interval = std::chrono::milliseconds(0)) {
    settings_.name = name;
    settings_.api_key = key;
    settings_.stream_chunks = 2;
    settings_.chunk_interval = chunk_interval;
    settings_.faults.force_status = force_status;
    settings_.faults.force_retry_after_ms = 30'000;
    engine_ = std::make_unique<sim::SimEngine>(settings_, clock_);
    server_ = std::make_unique<sim::SimServer>(*engine_, sim::ServerOptions{"127.0.0.1", 0, 1, false});
    thread_ = std::thread([this] { server_->run(); });
  }
  ~Sim() {
    server_->stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  json stats() const { return engine_->stats_json(); }
  bool sessions_closed() const {
    return await_condition([&] { return engine_->stats_json()["realtime"]["open"] == 0; });
  }

 private:
  sim::SimSettings settings_;
  sim::SystemClock clock_;
  std::unique_ptr<sim::SimEngine> engine_;
  std::unique_ptr<sim::SimServer> server_;
  std::thread thread_;
};

class WsClient {
 public:
  explicit WsClient(std::uint16_t port) : ws_(io_) {
    ws_.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
  }
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
  // The handshake, which must succeed.
  ::testing::AssertionResult open(const std::string& target,
                                  const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    beast::error_code ec;
    handshake(target, headers, ec);
    if (ec) return ::testing::AssertionFailure() << "handshake to " << target << ": " << ec.message();
    return ::testing::AssertionSuccess();
  }
  // A Realtime session: the handshake, then the session.created the backend opens with.
  ::testing::AssertionResult open_realtime(const std::string& target = "/openai/v1/realtime?model=gpt-4o") {
    if (auto opened = open(target); !opened) return opened;
    const json first = read_event();
    if (first["type"] != "session.created")
      return ::testing::AssertionFailure() << "first event " << first.dump();
    return ::testing::AssertionSuccess();
  }
  json read_event() {
    beast::flat_buffer buffer;
    ws_.read(buffer);
    return json::parse(beast::buffers_to_string(buffer.data()));
  }
  // Reads until the event of `type` (at most 20 events); its events, that one last.
  std::vector<json> read_until(const std::string& type) {
    std::vector<json> seen;
    while (seen.size() < 20) {
      seen.push_back(read_event());
      if (seen.back()["type"] == type) break;
    }
    return seen;
  }
  void send(const std::string& text) {
    ws_.text(true);
    ws_.write(asio::buffer(text));
  }
  websocket::stream<asio::ip::tcp::socket>& ws() { return ws_; }

 private:
  asio::io_context io_;
  websocket::stream<asio::ip::tcp::socket> ws_;
};

}  // namespace ws_sim_detail

using ws_sim_detail::Sim;
using ws_sim_detail::WsClient;

// `p` in front of `sim` as backend `a` with a declared TPM and a latency-based rule, so that
// what a session teaches routing shows: "" or the configuration's error.
inline std::string use_learning_policy(ProxyHarness& p, const Sim& sim) {
  return p.use_config_text({{"A_URL", sim.url()}}, R"(
backends:
  - {name: a, url: "${A_URL}", api_key: key-a, tpm: 1000000}
targets: [{id: a/gpt-4o, backend: a}]
rules:
  - {id: fast, type: latency-based-routing, load_balance_targets: [{target: a/gpt-4o}]}
)");
}
// What routing has learnt of that backend for gpt-4o: the tokens its quota counts, its latency samples.
inline std::int64_t quota_tokens_used(ProxyHarness& p) {
  return p.server->states().quota_usage(p.server->snapshot()->table.member(0), "gpt-4o").tokens_used;
}
inline std::uint32_t latency_samples(ProxyHarness& p) {
  const routing::PoolMember& a = p.server->snapshot()->table.member(0);
  return p.server->latency()
      .read(a.id, "gpt-4o", p.server->states().clock().now(), std::chrono::minutes(10))
      .samples;
}

}  // namespace smartlb::testing
