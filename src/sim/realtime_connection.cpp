#include "realtime_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

namespace smartlb::sim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

constexpr auto kNoThrow = net::as_tuple(net::use_awaitable);
// Realtime events are small; audio appends are at most a few MiB.
constexpr std::size_t kMaxMessageBytes = 16 * 1024 * 1024;

// Counts the session open from the first frame to the end, whatever ends it.
class OpenSession {
 public:
  explicit OpenSession(SimEngine& engine) : engine_(engine) {}
  ~OpenSession() { engine_.realtime_closed(); }
  OpenSession(const OpenSession&) = delete;
  OpenSession& operator=(const OpenSession&) = delete;

 private:
  SimEngine& engine_;
};

}  // namespace

net::awaitable<void> serve_realtime(SimEngine& engine, beast::tcp_stream stream,
                                    http::request<http::string_body> request, RealtimeAdmission admission) {
  stream.expires_never();  // the websocket's own timeouts apply from here
  websocket::stream<beast::tcp_stream> ws(std::move(stream));
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  const std::string name = engine.settings().name;
  const std::string subprotocol = admission.subprotocol;
  ws.set_option(websocket::stream_base::decorator([name, subprotocol](websocket::response_type& response) {
    response.set(http::field::server, "smartlb-sim");
    response.set("x-sim-name", name);
    if (!subprotocol.empty()) response.set(http::field::sec_websocket_protocol, subprotocol);
  }));
  ws.read_message_max(kMaxMessageBytes);
  ws.auto_fragment(false);  // one message, one frame: a relay can read each event whole

  if (auto [ec] = co_await ws.async_accept(request, kNoThrow); ec) {
    spdlog::debug("sim {}: websocket handshake failed: {}", name, ec.message());
    co_return;
  }
  RealtimeSession session = engine.open_realtime(admission);
  OpenSession open(engine);
  const auto pace = engine.settings().chunk_interval;

  if (!admission.echo) {
    ws.text(true);
    const RealtimeMessage hello = session.opening();
    if (auto [ec, n] = co_await ws.async_write(net::buffer(hello.text), kNoThrow); ec) co_return;
    engine.record_realtime(admission.deployment, 0, 1, 0);
  }
  beast::flat_buffer buffer;
  for (;;) {
    buffer.clear();
    if (auto [ec, n] = co_await ws.async_read(buffer, kNoThrow); ec) {
      if (ec != websocket::error::closed) spdlog::debug("sim {}: websocket ended: {}", name, ec.message());
      co_return;
    }
    if (admission.echo) {
      ws.text(ws.got_text());
      if (auto [ec, n] = co_await ws.async_write(buffer.data(), kNoThrow); ec) co_return;
      engine.record_realtime(admission.deployment, 1, 1, 0);
      continue;
    }
    const RealtimeReply reply =
        ws.got_text() ? session.on_text(beast::buffers_to_string(buffer.data())) : session.on_binary();
    ws.text(true);
    for (const auto& message : reply.messages) {
      if (message.is_content && pace.count() > 0) {
        net::steady_timer timer(co_await net::this_coro::executor, pace);
        co_await timer.async_wait(kNoThrow);
      }
      if (auto [ec, n] = co_await ws.async_write(net::buffer(message.text), kNoThrow); ec) co_return;
    }
    engine.record_realtime(admission.deployment, 1, static_cast<std::int64_t>(reply.messages.size()),
                           reply.tokens_served);
  }
}

}  // namespace smartlb::sim
