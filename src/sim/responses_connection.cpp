#include "responses_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include "smartlb/sim/responses_socket.hpp"

namespace smartlb::sim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

constexpr auto kNoThrow = net::as_tuple(net::use_awaitable);
constexpr std::size_t kMaxMessageBytes = 16 * 1024 * 1024;

}  // namespace

net::awaitable<void> serve_responses_socket(SimEngine& engine, beast::tcp_stream stream,
                                            http::request<http::string_body> request, SimRequest handshake) {
  stream.expires_never();  // the websocket's own timeouts apply from here
  websocket::stream<beast::tcp_stream> ws(std::move(stream));
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  const std::string name = engine.settings().name;
  ws.set_option(websocket::stream_base::decorator([name](websocket::response_type& response) {
    response.set(http::field::server, "smartlb-sim");
    response.set("x-sim-name", name);
  }));
  ws.read_message_max(kMaxMessageBytes);
  ws.auto_fragment(false);  // one event, one frame: a relay can read each event whole

  if (auto [ec] = co_await ws.async_accept(request, kNoThrow); ec) {
    spdlog::debug("sim {}: websocket handshake failed: {}", name, ec.message());
    co_return;
  }
  beast::flat_buffer buffer;
  for (;;) {
    buffer.clear();
    if (auto [ec, n] = co_await ws.async_read(buffer, kNoThrow); ec) {
      if (ec != websocket::error::closed) spdlog::debug("sim {}: websocket ended: {}", name, ec.message());
      co_return;
    }
    ws.text(true);
    for (const std::string& event :
         responses_socket_turn(engine, handshake, beast::buffers_to_string(buffer.data()))) {
      if (auto [ec, n] = co_await ws.async_write(net::buffer(event), kNoThrow); ec) co_return;
    }
  }
}

}  // namespace smartlb::sim
