// The WebSocket relay after a verified 101 (include/smartlb/net/websocket_relay.hpp).
//
// Why bytes and not Beast's websocket::stream on each side: a stream would unmask every client
// frame and mask it again, gather fragmented messages whole before handing them on (a large
// audio append held in memory), and answer pings itself. Relaying the bytes keeps frames as
// the peers wrote them, memory bounded by two buffers that exist only from a read to its write
// (an idle session holds none), and ping/pong/close end to end;
// the frame parser alone tells where frames begin and end.
#include "smartlb/net/websocket_relay.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <string>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>

#include "smartlb/http/response_fields.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/event_stream_buffer.hpp"
#include "smartlb/net/exchange_context.hpp"
#include "smartlb/net/forward.hpp"
#include "smartlb/net/worker.hpp"  // DrainListener
#include "smartlb/websocket/frame_parser.hpp"
#include "smartlb/websocket/handshake.hpp"
#include "smartlb/websocket/relay_direction.hpp"
#include "smartlb/websocket/responses_socket.hpp"

namespace smartlb::net {
namespace {

using SteadyTimer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                               asio::wait_traits<std::chrono::steady_clock>, Executor>;

// Each direction's buffer: what may be in flight between a read and its write.
constexpr std::size_t kRelayBufferBytes = 16 * 1024;
// After smartlb sent its closes: how long the peers have to answer them and hang up.
constexpr std::chrono::seconds kCloseGrace{5};
// Going Away: the session ends because smartlb stops (a drain) or its limits passed.
constexpr std::uint16_t kGoingAway = 1001;
constexpr std::uint16_t kProtocolError = 1002;
// Once one side's source has ended (a FIN, a reset, bad framing), the other has this long to end
// too before both connections close: a plain-HTTP backend may ignore a half-close.
constexpr std::chrono::seconds kOtherSideGrace{1};

// The fields of the backend's 101 that reach the client: those of any answer (not hop-by-hop
// ones, not its per-backend quota headers, not the two smartlb writes), not the handshake's own
// (smartlb answers the client's key; no extension was offered upstream), no framing.
bool passes_to_client(std::string_view name, const http::ConnectionNames& named) {
  if (http::is_replaced_answer_field(name) || named.contains(name) || base::iequals(name, "content-length"))
    return false;
  constexpr std::string_view kHandshake = "sec-websocket-";
  if (name.size() >= kHandshake.size() && base::iequals(name.substr(0, kHandshake.size()), kHandshake))
    return base::iequals(name, "sec-websocket-protocol");
  return true;
}

std::string client_101(const http1::ResponseHead& backend, const WebSocketSession& s) {
  std::string head;
  http1::append_status_line(head, 11, 101, "Switching Protocols");
  http1::append_field(head, "Upgrade", "websocket");
  http1::append_field(head, "Connection", "Upgrade");
  http1::append_field(head, "Sec-WebSocket-Accept", websocket::accept_for(s.client_key));
  const http::ConnectionNames named(backend.fields);
  for (std::size_t i = 0; i < backend.fields.size(); ++i) {
    const auto f = backend.fields[i];
    if (passes_to_client(f.name, named)) http1::append_field(head, f.name, f.value);
  }
  http1::append_field(head, "x-request-id", s.request_id);
  http1::append_field(head, "x-smartlb-backend", s.backend_name);
  head.append("\r\n");
  return head;
}

class Relay final : public DrainListener {
 public:
  Relay(const ExchangeContext& w, io::TimedSocket& client, UpstreamConnection& upstream,
        const WebSocketSession& session, telemetry::RequestRecord& rec)
      : w_(w),
        client_(client),
        upstream_(upstream),
        rec_(rec),
        responses_(session.responses),
        timer_(client.get_executor()),
        client_turn_(client.get_executor()),
        idle_(w.cfg.realtime_idle_timeout),
        ends_at_(std::chrono::steady_clock::now() + w.cfg.realtime_max_session) {
    last_activity_ = std::chrono::steady_clock::now();
    if (session.responses_tag) {
      server_events_ = std::make_unique<websocket::ServerEventEditor>(*session.responses_tag);
      client_requests_ = std::make_unique<websocket::ClientRequestEditor>(
          session.responses_tag->bits, session.configured_tag, session.reads_model);
      down_.rewriter = std::make_unique<websocket::FrameRewriter>(
          websocket::Sender::Server, websocket::kEditedEventBytes, *server_events_);
      up_.rewriter = std::make_unique<websocket::FrameRewriter>(
          websocket::Sender::Client, websocket::kEditedRequestBytes, *client_requests_);
    } else {
      down_.reads_usage = true;
    }
    listed_ = w_.drain_listeners.insert(w_.drain_listeners.end(), this);
  }
  ~Relay() { w_.drain_listeners.erase(listed_); }
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  void on_drain() override {
    draining_ = true;
    timer_.cancel();
  }

  // `first`: bytes the backend sent right behind its 101 (read with its head).
  // The pumps run as coroutines of their own, this one supervises: lighter than awaiting the
  // three together (`&&`, a parallel group of three spawned coroutines and its cancellation
  // slots), about 1.5 KiB of each session's memory. Returns once both pumps are done, whatever
  // was thrown (the Relay outlives them); an exception closes both connections and is thrown here then.
  Task<void> run(std::string first) {
    first_ = std::move(first);
    try {
      for (const bool down : {true, false}) {
        ++pumps_running_;  // (first: a pump that fails to start counts itself out)
        start_pump(down);
      }
      co_await supervise();
    } catch (...) {
      failed(std::current_exception());
    }
    while (pumps_running_ > 0) {  // only after a throw: supervise returns when none runs
      timer_.expires_at(std::chrono::steady_clock::time_point::max());
      co_await timer_.async_wait(use_tuple);
    }
    if (failure_) std::rethrow_exception(failure_);
    if (usage_.seen()) {
      rec_.prompt_tokens = usage_.input_tokens();
      rec_.completion_tokens = usage_.output_tokens();
    }
    // A Responses socket's handshake may name no model: its events do (metrics, prices).
    if (rec_.deployment.empty()) rec_.deployment = usage_.model();
  }

 private:
  using Direction = websocket::RelayDirection;

  using Read = std::tuple<error_code, std::size_t>;
  // The next bytes of one direction's source into `buffer` (emptied first), without waiting: one
  // recv (decrypted, for a TLS upstream); would_block when it has nothing, and always where
  // reads-now are not compiled for a plain connection (io/draining_read.hpp).
  // When a plain one has nothing, the pump returns and its source is waited for holding no buffer
  // and no frame: the room goes back to the worker (EventRooms), the pump starts again on the
  // wake and this read follows, so an idle session holds no relay buffer and no pump frame
  // (await_source). (Asio's own read would wait holding the buffer, and the
  // socket's mark cannot be trusted here: the other direction's writes to the same descriptor
  // bring it events. Measured at 500 idle sessions, falling back to Asio's read after a wake
  // that found nothing left a third of the pumps holding 16 KiB each.)
  Read read_ready(bool from_upstream, io::beast::flat_buffer& buffer) {
    buffer.clear();
    error_code ec;
    const auto room = buffer.prepare(kRelayBufferBytes);
    const std::size_t n =
        from_upstream ? upstream_.read_now(room, ec) : io::read_now(client_.socket(), room, ec);
    if (ec != asio::error::would_block) buffer.commit(n);
    return {ec, n};
  }
  // The next bytes the usual way: without reads-now, or from a TLS upstream whose layer holds
  // part of a record or one it could not write (a write that must wait is the usual read's to
  // handle: a wait for readability alone would not end it).
  Task<Read> read_into(bool from_upstream, io::beast::flat_buffer& buffer) {
    buffer.clear();
    // Not a conditional expression around co_await: GCC 12 miscompiles one.
    const auto room = buffer.prepare(kRelayBufferBytes);
    const std::span<char> into(static_cast<char*>(room.data()), room.size());
    Read read;
    if (from_upstream)
      read = co_await read_upstream(into);
    else
      read = co_await read_client(into);
    buffer.commit(std::get<1>(read));
    co_return read;
  }
  bool tls_holds_bytes() {
    UpstreamConnection::Tls* tls = upstream_.tls();
    return tls && tls->holds_bytes();
  }
  Task<std::tuple<error_code, std::size_t>> read_client(std::span<char> into) {
    co_return co_await client_.async_read_some(asio::buffer(into.data(), into.size()), use_tuple);
  }
  Task<std::tuple<error_code, std::size_t>> read_upstream(std::span<char> into) {
    const auto buffer = asio::buffer(into.data(), into.size());
    if (UpstreamConnection::Tls* tls = upstream_.tls())
      co_return co_await tls->async_read_some(buffer, use_tuple);
    co_return co_await upstream_.tcp().async_read_some(buffer, use_tuple);
  }
  Task<error_code> write_client(std::string_view a, std::string_view b = {}) {
    const std::array<asio::const_buffer, 2> bufs{asio::buffer(a.data(), a.size()),
                                                 asio::buffer(b.data(), b.size())};
    auto [ec, n] = co_await asio::async_write(client_, bufs, use_tuple);
    co_return ec;
  }
  Task<error_code> write_upstream(std::string_view a, std::string_view b = {}) {
    const std::array<asio::const_buffer, 2> bufs{asio::buffer(a.data(), a.size()),
                                                 asio::buffer(b.data(), b.size())};
    if (UpstreamConnection::Tls* tls = upstream_.tls())
      co_return std::get<0>(co_await asio::async_write(*tls, bufs, use_tuple));
    co_return std::get<0>(co_await asio::async_write(upstream_.tcp(), bufs, use_tuple));
  }
  Task<error_code> write_to(bool to_client, std::string_view a, std::string_view b = {}) {
    return to_client ? write_client(a, b) : write_upstream(a, b);
  }

  // smartlb's close for the direction's destination: a client's frames are masked. 1001 (going
  // away), or 1002 once either side broke the protocol.
  std::string close_for(bool to_client) {
    const std::uint16_t code = protocol_error_ ? kProtocolError : kGoingAway;
    if (to_client) return websocket::close_frame(code);
    std::array<std::uint8_t, 4> mask{};
    const std::uint64_t r = w_.rng.next();
    for (std::size_t i = 0; i < 4; ++i) mask[i] = static_cast<std::uint8_t>(r >> (8 * i));
    return websocket::close_frame(code, &mask);
  }

  // Moves one direction's bytes until its source ends or a write fails.
  Task<void> pump(Direction& d, bool to_client) {
    io::beast::flat_buffer buffer;  // storage only from a read to its write (read_ready)
    std::string_view piece;
    if (to_client && !first_.empty()) piece = first_;
    for (;;) {
      if (to_client) co_await wait_turn(d);
      if (d.close_pending && !d.close_sent && d.at_boundary()) {  // asked for while writing
        d.close_sent = true;
        d.writing = true;
        const error_code wec = co_await write_to(to_client, close_for(to_client));
        d.writing = false;
        if (wec) break;
      }
      if (piece.empty()) {
        // The backend's first events may have come with its 101 (Realtime's session.created):
        // written now, their room goes before the session idles.
        if (to_client && !first_.empty()) std::string().swap(first_);
        if (buffer.capacity() == 0) w_.spare_event_rooms.take(buffer, kRelayBufferBytes);
        auto [ec, n] = read_ready(to_client, buffer);
        // Idle: the pump ends here, its frame and its buffer's room with it, and a wait with a
        // small handler starts it again when the source has bytes, its close or an error
        // (await_source). A wake that finds nothing (the other direction's writes to the
        // descriptor wake it too) ends it the same way.
        if (SMARTLB_DRAINING_READS && ec == asio::error::would_block && !(to_client && tls_holds_bytes())) {
          w_.spare_event_rooms.give(buffer);
          (to_client ? down_waits_ : up_waits_) = true;
          co_return;
        }
        if (ec == asio::error::would_block) std::tie(ec, n) = co_await read_into(to_client, buffer);
        if (ec || n == 0) break;
        piece = std::string_view(static_cast<const char*>(buffer.data().data()), n);
      }
      last_activity_ = std::chrono::steady_clock::now();
      if (d.close_sent) {  // after smartlb's close: the peers' answers are dropped
        piece = {};
        continue;
      }
      const bool boundary_before = d.at_boundary();
      std::string_view out, close;
      if (!d.feed(piece, out)) {
        spdlog::debug("websocket {}: {} sent what is not WebSocket framing ({}); closing (1002)",
                      rec_.request_id, to_client ? "the backend" : "the client",
                      websocket::to_string(d.error()));
        protocol_error_ = true;  // the supervisor closes both sides with 1002, where between frames
        // The whole frames before the bad one still go; then the destination is between frames
        // and its close can follow. (A rewritten direction's are dropped: it stays where it was.)
        d.clean_end = boundary_before || (d.ended_here && !d.rewriter);
        if (d.ended_here && !d.rewriter && d.last_end > 0) {
          if (to_client) co_await wait_turn(d);
          d.writing = true;
          const error_code wec = co_await write_to(to_client, piece.substr(0, d.last_end));
          d.writing = false;
          if (wec) d.clean_end = false;
        }
        break;
      }
      for (const websocket::UsageEvent& e : d.found) learn(e);
      d.found.clear();
      if (server_events_) {
        for (const websocket::ResponseEvent& e : server_events_->found) learn({e.created, e.usage, e.ended});
        server_events_->found.clear();
      }
      if (client_requests_ && !client_requests_->refusals.empty()) co_await answer_client();
      std::string close_frame;
      if (d.close_pending && d.ended_here) {  // what ends at the boundary, then the close
        out = out.substr(0, d.last_end);
        close_frame = close_for(to_client);
        close = close_frame;
        d.close_sent = true;
      }
      if (to_client) co_await wait_turn(d);
      if (d.close_sent && close.empty()) {  // smartlb's own close went meanwhile
        piece = {};
        continue;
      }
      d.writing = true;
      const error_code wec = co_await write_to(to_client, out, close);
      d.writing = false;
      piece = {};
      if (wec) break;
      if (to_client) co_await flush_injected();
    }
    if (to_client) std::string().swap(first_);  // (the other pump never views it)
    d.ended = true;
    // The other side learns the end the way TCP says it; both done, the supervisor returns.
    error_code ignored;
    if (!protocol_error_) {  // a protocol error's closes go first (the supervisor's)
      if (to_client)
        client_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      else if (upstream_.tls())
        upstream_.close();  // no half-close under TLS
      else
        upstream_.tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
    timer_.cancel();  // the supervisor gives the other side kOtherSideGrace to end too
  }
  Task<void> pump_down() { return pump(down_, true); }
  Task<void> pump_up() { return pump(up_, false); }
  // A pump runs as a coroutine of its own while its source has bytes, and not at all while it
  // waits for them: an idle session holds no pump frame, only two waits (pumps_running_ counts
  // a waiting pump as running).
  // (Outside run()'s try once the session is under way: what starting one throws ends the pump,
  // as what the pump throws does.)
  void start_pump(bool down) {
    try {
      asio::co_spawn(client_.get_executor(), down ? pump_down() : pump_up(),
                     [this, down](std::exception_ptr e) { pump_returned(down, e); });
    } catch (...) {
      pump_ended(std::current_exception());
    }
  }
  void pump_returned(bool down, std::exception_ptr e) {
    if (!e && std::exchange(down ? down_waits_ : up_waits_, false)) {
      try {
        await_source(down);
      } catch (...) {
        pump_ended(std::current_exception());
      }
      return;
    }
    pump_ended(e);
  }
  // However the wait ends (bytes, the peer's close, the socket closed by smartlb), the pump
  // starts again and reads what it finds: its read reports an error the wait saw.
  void await_source(bool down) {
    io::TimedSocket& source = down ? upstream_.tcp() : client_;
    source.async_wait_readable([this, down](error_code) { start_pump(down); });
  }
  void pump_ended(std::exception_ptr e) {
    if (e) failed(e);
    --pumps_running_;
    timer_.cancel();  // the supervisor returns once none runs
  }
  // Something threw: both connections close, so the other pump's wait ends with an error, and
  // a pump waiting for its turn to write (wait_turn) is let go.
  void failed(std::exception_ptr e) {
    if (!failure_) failure_ = e;
    close_both();
    down_.writing = up_.writing = false;
    client_turn_.cancel();
  }

  void learn(const websocket::UsageEvent& e) {
    const std::optional<base::Nanos> took = usage_.learn(e, std::chrono::steady_clock::now());
    if (!responses_) return;
    if (e.created) {
      responses_->response_started();
      return;
    }
    if (!e.ended)
      responses_->response_done(e.usage, took,
                                client_requests_ ? client_requests_->model : std::string_view{});
    responses_->response_ended();
  }

  // smartlb writes to the client from elsewhere than the backend's pump too (answer_client,
  // send_closes): that pump waits for such a write to end before its own.
  Task<void> wait_turn(Direction& d) {
    while (d.writing) {
      client_turn_.expires_at(std::chrono::steady_clock::time_point::max());
      co_await client_turn_.async_wait(use_tuple);
    }
  }

  // The client's requests that were not forwarded get their error events, as text frames
  // between two of the backend's.
  Task<void> answer_client() {
    for (const std::string& event : client_requests_->refusals) {
      websocket::FrameHeader h;
      h.fin = true;
      h.opcode = websocket::Opcode::Text;
      websocket::append_frame_header(h, event.size(), down_.injected);
      down_.injected.append(event);
    }
    client_requests_->refusals.clear();
    co_await flush_injected();
  }

  // Writes smartlb's own frames to the client now if the backend's direction is between frames
  // and idle; else its pump does, after the write that brings it to a boundary.
  Task<void> flush_injected() {
    Direction& d = down_;
    if (d.injected.empty() || d.writing || !d.at_boundary() || d.close_sent || d.ended) co_return;
    const std::string frames = std::move(d.injected);
    d.injected.clear();
    d.writing = true;
    co_await write_client(frames);  // a failure shows in the next write of the backend's pump
    d.writing = false;
    client_turn_.cancel();
    if (d.close_pending && !d.close_sent) {  // asked for during this write
      d.close_sent = true;
      d.writing = true;
      co_await write_client(close_for(true));
      d.writing = false;
      client_turn_.cancel();
    }
  }

  // smartlb's close goes both ways: at once where a direction is between frames and idle,
  // else by its pump at its next boundary.
  Task<void> send_closes() {
    for (const bool to_client : {true, false}) {
      Direction& d = to_client ? down_ : up_;
      // A direction whose source ended gets no close, unless a protocol error ended it between frames.
      if (d.close_sent || (d.ended && !(protocol_error_ && d.clean_end))) continue;
      if (d.writing || (!d.ended && !d.at_boundary())) {
        d.close_pending = true;
        continue;
      }
      d.close_sent = true;  // first: a pump that wakes meanwhile drops what it read
      d.writing = true;
      const std::string frame = close_for(to_client);
      co_await write_to(to_client, frame);
      d.writing = false;
      if (to_client) client_turn_.cancel();
    }
  }

  void close_both() {
    error_code ignored;
    client_.socket().close(ignored);
    upstream_.close();
  }

  // Ends the session when smartlb must: idle too long, open too long, a drain. Returns once
  // both pumps are done.
  Task<void> supervise() {
    using std::chrono::steady_clock;
    std::optional<steady_clock::time_point> hang_up_at;  // after smartlb's closes
    for (;;) {
      if (pumps_running_ == 0) co_return;
      const auto now = steady_clock::now();
      if (hang_up_at && now >= *hang_up_at) {
        close_both();
        hang_up_at = steady_clock::time_point::max();
      }
      if (!hang_up_at) {
        const char* why = protocol_error_                 ? "a protocol error"
                          : draining_                     ? "the server drains"
                          : now >= ends_at_               ? "REALTIME_MAX_SESSION_SECONDS passed"
                          : now >= last_activity_ + idle_ ? "REALTIME_IDLE_TIMEOUT_SECONDS passed"
                                                          : nullptr;
        if (why) {
          spdlog::debug("websocket {}: closing ({}): {}", rec_.request_id, protocol_error_ ? 1002 : 1001,
                        why);
          hang_up_at = now + (protocol_error_ ? kOtherSideGrace : kCloseGrace);
          co_await send_closes();
          continue;
        }
        // One side is done (its close, FIN or reset): the other has a moment to end too, then both
        // connections close, whatever a backend does with a half-close.
        if (down_.ended || up_.ended) {
          hang_up_at = now + kOtherSideGrace;
          continue;
        }
      }
      timer_.expires_at(hang_up_at ? *hang_up_at : std::min(ends_at_, last_activity_ + idle_));
      co_await timer_.async_wait(use_tuple);
    }
  }

  const ExchangeContext& w_;
  io::TimedSocket& client_;
  UpstreamConnection& upstream_;
  telemetry::RequestRecord& rec_;
  SessionResponses* responses_;
  SteadyTimer timer_;
  SteadyTimer client_turn_;  // wakes the backend's pump once smartlb's own write to the client ended
  std::chrono::steady_clock::duration idle_;
  std::chrono::steady_clock::time_point ends_at_;
  std::chrono::steady_clock::time_point last_activity_;
  std::list<DrainListener*>::iterator listed_;
  bool draining_ = false;
  std::string first_;
  Direction down_{websocket::Sender::Server};  // backend -> client
  Direction up_{websocket::Sender::Client};    // client -> backend
  // A Responses socket's (on the heap: a Realtime session holds nothing for them).
  std::unique_ptr<websocket::ServerEventEditor> server_events_;
  std::unique_ptr<websocket::ClientRequestEditor> client_requests_;
  websocket::SessionUsage usage_;
  bool protocol_error_ = false;  // either side sent what is not WebSocket framing
  int pumps_running_ = 0;
  bool down_waits_ = false, up_waits_ = false;  // a pump returned to wait for its source (await_source)
  std::exception_ptr failure_;                  // what a pump threw
};

// What an idle session holds is what a thousand of them cost: none of the request's texts is
// needed once the client has its 101 (its key, viewed by `session`, among them), nor the client
// connection's read buffer (the relay reads with rooms of its own, and a client sends no frame
// before the 101), nor the backend's head.
void free_request_texts(ForwardBuffers& buffers, UpstreamConnection& upstream) {
  if (buffers.client_input && buffers.client_input->size() == 0) buffers.client_input->shrink_to_fit();
  buffers.release_large(0);
  upstream.head.fields.release();
  upstream.buffer.shrink_to_fit();  // (emptied by the caller)
}

}  // namespace

Task<void> relay_websocket(const ExchangeContext& w, io::TimedSocket& client, UpstreamPtr upstream,
                           const WebSocketSession& session, telemetry::RequestRecord& rec,
                           ForwardBuffers& buffers) {
  rec.status = 101;
  error_code ec;
  {  // (its text freed before the session's hour)
    const std::string head = client_101(upstream->head, session);
    client.expires_after(w.cfg.http_timeout);
    ec = std::get<0>(co_await asio::async_write(client, asio::buffer(head), use_tuple));
  }
  if (client.done(ec)) {
    rec.client_aborted = true;
    upstream->close();
    co_return;
  }
  const auto pending = upstream->buffer.data();
  std::string first(static_cast<const char*>(pending.data()), pending.size());
  upstream->buffer.consume(pending.size());
  free_request_texts(buffers, *upstream);
  Relay relay(w, client, *upstream, session, rec);
  co_await relay.run(std::move(first));
  upstream->close();
}

}  // namespace smartlb::net
