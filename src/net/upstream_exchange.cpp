// The mechanism of forwarding (include/smartlb/net/upstream_exchange.hpp): bytes to one
// upstream and back to the client. What to do with what happens is the forwarder's. This file
// sends a request and reads its answer's head; upstream_exchange_relay.cpp relays the body.
#include "smartlb/net/upstream_exchange.hpp"

#include <array>
#include <span>

#include "smartlb/http/response_fields.hpp"
#include "smartlb/http1/http_io.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/websocket_relay.hpp"
#include "smartlb/net/worker.hpp"  // DrainListener

namespace smartlb::net {
namespace {

// A failover response body up to this size is read and dropped so the connection can be
// reused; a larger one is not worth the wait.
constexpr std::uint64_t kDrainLimitBytes = 64 * 1024;

}  // namespace

routing::TransportFailure classify_transport_error(const error_code& ec) {
  if (ec == beast::error::timeout) return routing::TransportFailure::Timeout;
  if (is_parse_error(ec) && ec != beast::http::error::end_of_stream &&
      ec != beast::http::error::partial_message)
    return routing::TransportFailure::Protocol;
  return routing::TransportFailure::Lost;
}

Task<error_code> UpstreamExchange::read_response_head(UpstreamConnection& c, std::chrono::seconds timeout,
                                                      bool& got_bytes) {
  const bool head_request = req_.method == beast::http::verb::head;
  error_code ec;
  // Interim answers (100 Continue, 103 Early Hints) are not the response: read past them.
  for (;;) {
    parser_.emplace(c.head);
    parser_->body_views(true);  // the body is relayed from the connection's buffer
    if (head_request) parser_->skip(true);
    c.tcp().expires_after(timeout);
    ec = c.tcp().done(
        co_await c.visit([&](auto& s) { return read_http(s, c.buffer, *parser_, http1::ReadGoal::header); }));
    got_bytes = got_bytes || parser_->got_some() || c.buffer.size() > 0;
    if (ec || c.head.status / 100 != 1 || c.head.status == 101) break;
  }
  co_return ec;
}

Task<Exchanged> UpstreamExchange::send(const UpstreamCall& call) {
  discard();  // a previous attempt's answer the policy let go of without reading on
  if (call.streamed) co_return co_await send_streamed(call, *call.streamed);
  Exchanged r;
  for (int round = 0; round < 2; ++round) {
    // The pool first (on the retry, a new connection: the pooled one just failed).
    ConnectResult cr;
    if (round == 0) cr.conn = ctx_.pool.take_pooled(call.backend);
    if (!cr.conn) cr = co_await ctx_.pool.connect(call.backend, call.url);
    if (!cr.conn) {
      r.failure = cr.failure;
      r.detail = std::move(cr.detail);
      co_return r;
    }
    UpstreamConnection& c = *cr.conn;
    r.written = ctx_.clock.now();
    c.tcp().expires_after(call.timeout);
    const std::array<asio::const_buffer, 2> request{asio::buffer(call.head.data(), call.head.size()),
                                                    asio::buffer(call.body.data(), call.body.size())};
    // One buffer goes as send(); Asio uses sendmsg() for any sequence type. (No conditional
    // expressions: GCC 12 miscompiles co_await inside one.)
    error_code wec;
    UpstreamConnection::Tls* const tls = c.tls();
    if (tls && call.body.empty())
      wec = std::get<0>(co_await asio::async_write(*tls, request[0], use_tuple));
    else if (tls)
      wec = std::get<0>(co_await asio::async_write(*tls, request, use_tuple));
    else if (call.body.empty())
      wec = std::get<0>(co_await asio::async_write(c.tcp(), request[0], use_tuple));
    else
      wec = std::get<0>(co_await asio::async_write(c.tcp(), request, use_tuple));
    error_code ec = c.tcp().done(wec);
    bool got_bytes = false;
    if (!ec) ec = co_await read_response_head(c, call.timeout, got_bytes);
    if (!ec) {
      conn_ = std::move(cr.conn);
      r.answered = true;
      co_return r;
    }
    c.close();
    parser_.reset();
    // A kept-alive connection the server closed while it idled fails before any byte: that
    // is not the backend's fault, so try once more on a new connection.
    if (c.reused && !got_bytes && round == 0 && ec != beast::error::timeout) continue;
    r.failure = classify_transport_error(ec);
    r.detail = ec.message();
    co_return r;
  }
  co_return r;
}

Task<Exchanged> UpstreamExchange::send_streamed(const UpstreamCall& call, StreamedBody& body) {
  Exchanged r;
  ConnectResult cr = co_await ctx_.pool.connect(call.backend, call.url);
  if (!cr.conn) {
    r.failure = cr.failure;
    r.detail = std::move(cr.detail);
    co_return r;
  }
  UpstreamConnection& c = *cr.conn;
  r.written = ctx_.clock.now();
  // Named, not a temporary in the co_await: GCC 12 cannot put a braced array in the frame.
  const std::array<asio::const_buffer, 3> head{asio::buffer(call.head.data(), call.head.size())};
  error_code ec = co_await write_upstream(c, head, call.timeout);
  if (!ec) {
    r.body_end = co_await stream_body(body, c, call.timeout);
    if (r.body_end == StreamEnd::UpstreamFailed) {
      // A backend may answer on the head alone (a 401, 413 or 429) and close before the body is
      // whole, so that the next write fails: that answer, waiting in the socket, is the client's
      // rather than a 502. A connection that broke without one fails the read at once.
      bool got_bytes = false;
      if (!co_await read_response_head(c, call.timeout, got_bytes)) {
        answered_mid_body_ = true;
        conn_ = std::move(cr.conn);
        r.answered = true;
        co_return r;
      }
      parser_.reset();
    }
    if (r.body_end != StreamEnd::Sent) {
      c.close();
      r.detail = "the request body was cut short";
      co_return r;
    }
    bool got_bytes = false;
    ec = co_await read_response_head(c, call.timeout, got_bytes);
  }
  if (!ec) {
    conn_ = std::move(cr.conn);
    r.answered = true;
    co_return r;
  }
  c.close();
  parser_.reset();
  r.failure = classify_transport_error(ec);
  r.detail = ec.message();
  co_return r;
}

Task<void> UpstreamExchange::drain_or_close() { return drain_or_close(std::move(conn_)); }

void UpstreamExchange::discard() {
  if (conn_) conn_->close();
  conn_.reset();
}

Task<bool> UpstreamExchange::refuse(const ErrorReply& reply) {
  const error_code ec = co_await write_error_reply(client_, reply, ctx_.cfg.http_timeout);
  co_return !ec && reply.keep_alive;
}

Task<void> UpstreamExchange::pause(std::chrono::milliseconds delay) {
  WaitTimer timer(client_.get_executor(), delay);
  co_await timer.async_wait(use_tuple);
}

namespace {

// A drain ends a wait for capacity: the request gets its answer rather than be cut when the
// drain's time is up.
class DrainEndsWait final : public DrainListener {
 public:
  DrainEndsWait(std::list<DrainListener*>& listeners, WaitTimer& timer)
      : listeners_(listeners), listed_(listeners.insert(listeners.end(), this)), timer_(timer) {}
  DrainEndsWait(const DrainEndsWait&) = delete;
  DrainEndsWait& operator=(const DrainEndsWait&) = delete;
  ~DrainEndsWait() { listeners_.erase(listed_); }
  void on_drain() override {
    drained = true;
    timer_.cancel();
  }
  bool drained = false;

 private:
  std::list<DrainListener*>& listeners_;
  std::list<DrainListener*>::iterator listed_;
  WaitTimer& timer_;
};

}  // namespace

Task<CapacityWaitEnd> UpstreamExchange::wait_for_capacity(base::Nanos delay) {
  if (ctx_.draining) co_return CapacityWaitEnd::Draining;
  WaitTimer timer(client_.get_executor(), delay);
  DrainEndsWait drain(ctx_.drain_listeners, timer);
  ClientWatch watch;
  watch.arm(client_.socket(), timer);  // a client that leaves meanwhile ends the wait
  co_await timer.async_wait(use_tuple);
  if (watch.client_left()) co_return CapacityWaitEnd::ClientLeft;
  watch.disarm(client_.socket());
  co_return drain.drained ? CapacityWaitEnd::Draining : CapacityWaitEnd::Waited;
}

Task<void> UpstreamExchange::open_session(const WebSocketSession& session) {
  return relay_websocket(ctx_, client_, std::move(conn_), session, rec_, buffers_);
}

Task<void> UpstreamExchange::drain_or_close(UpstreamPtr conn) {
  http1::ResponseReader& p = *parser_;
  const auto length = p.content_length();
  if (!p.keep_alive() || (!p.is_done() && (!length || *length > kDrainLimitBytes))) {
    conn->close();
    co_return;
  }
  while (!p.is_done()) {
    conn->tcp().expires_after(std::chrono::seconds(5));
    const error_code ec = conn->tcp().done(
        co_await conn->visit([&](auto& s) { return read_http(s, conn->buffer, p, http1::ReadGoal::some); }));
    p.take_body_view();  // dropped
    if (ec) {
      conn->close();
      co_return;
    }
  }
  if (conn->buffer.size() == 0)
    ctx_.pool.release(std::move(conn));
  else
    conn->close();
}

}  // namespace smartlb::net
