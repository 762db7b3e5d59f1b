// One client connection: read and validate requests, hand each to the forwarder, keep the
// connection alive between them, and leave promptly when the server drains.
#include <limits>
#include <memory>

#include <spdlog/spdlog.h>

#include "smartlb/base/text.hpp"
#include "smartlb/clients/jwt/key_wait.hpp"
#include "smartlb/http/body_intake.hpp"
#include "smartlb/http/header_rules.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http1/http_io.hpp"
#include "smartlb/io/lingering_close.hpp"
#include "smartlb/net/client_session.hpp"
#include "smartlb/net/forward.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/request_refusals.hpp"
#include "smartlb/net/request_tracing.hpp"
#include "smartlb/net/streamed_body.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/websocket/handshake.hpp"

namespace smartlb::net {
namespace {

// How long a request with a token waits for its issuer's keys to be fetched (the first fetch,
// or the refetch its unknown kid asked for) before it is refused.
constexpr base::Nanos kTokenKeyWait = std::chrono::seconds(5);

// Keeps the session listed in its worker's registry for as long as it lives.
class SessionRegistration {
 public:
  SessionRegistration(Worker& w, io::TimedSocket& stream) : w_(w) {
    entry_.stream = &stream;
    it_ = w_.sessions.insert(w_.sessions.end(), &entry_);
    w_.shared.connections.fetch_add(1, std::memory_order_relaxed);
  }
  ~SessionRegistration() {
    w_.sessions.erase(it_);
    if (w_.shared.connections.fetch_sub(1, std::memory_order_acq_rel) == 1 && w_.shared.draining.load() &&
        w_.shared.on_drained)
      w_.shared.on_drained();
  }
  SessionEntry& entry() { return entry_; }

 private:
  Worker& w_;
  SessionEntry entry_;
  std::list<SessionEntry*>::iterator it_;
};

// A fresh 32-hex-digit request id, written into `id`.
void new_request_id(base::FastRandom& rng, std::string& id) {
  id.resize(32);
  char* out = id.data();
  for (int word = 0; word < 2; ++word) {
    std::uint64_t r = rng.next();
    for (int i = 0; i < 16; ++i, r >>= 4) *out++ = base::hex_digit(r & 0xf);
  }
}

// A request id the client sent is kept if it is short and printable.
bool acceptable_request_id(std::string_view v) {
  if (v.empty() || v.size() > 128) return false;
  for (char c : v)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

// Reads the rest of a request body within `timeout`, or (a chunked body that may be streamed)
// until `body` holds more than `stop_past` bytes; a late body is beast::error::timeout.
// Not with the socket's deadline: the sweeper closes a socket past its deadline, and a client
// whose body is late must still be told so (408). A timer cancels the pending read instead and
// leaves the socket open for the answer. Only a body that did not come with its head gets
// here, and it pays for one timer however many reads it takes.
Task<error_code> read_body(io::TimedSocket& stream, beast::flat_buffer& buffer, http1::RequestReader& parser,
                           std::chrono::seconds timeout, const std::string& body, std::uint64_t stop_past,
                           BodyShare& share) {
  // The timer's handler may already be queued when the read ends, and run after this frame is
  // gone: what it shares with the read lives as long as the handler.
  struct Deadline {
    Socket* socket;
    bool passed = false;  // the handler cancelled the read
    bool over = false;    // the read ended first
  };
  const auto deadline = std::make_shared<Deadline>(Deadline{&stream.socket()});
  asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                             Executor>
      timer(stream.get_executor(), timeout);
  timer.async_wait([deadline](error_code ec) {
    if (ec || deadline->over) return;
    deadline->passed = true;
    error_code ignored;
    deadline->socket->cancel(ignored);
  });
  bool progressed = false;
  error_code ec;
  for (;;) {
    const bool settled = feed_buffered(buffer, parser, http1::ReadGoal::message, progressed, ec);
    if (!share.grow_to(body.size())) {  // a chunked body past what may be buffered at once
      ec = asio::error::no_buffer_space;
      break;
    }
    if (settled || body.size() > stop_past) break;
    // Checked before every read too: the handler may have run between a read's completion and
    // this frame's resumption, when there was no read to cancel.
    if (deadline->passed) {
      ec = beast::error::timeout;
      break;
    }
    auto [rec, n] =
        co_await stream.async_read_some(buffer.prepare(beast::read_size(buffer, 65536)), use_tuple);
    if (rec == asio::error::eof) {
      parser.put_eof(ec);
      break;
    }
    if (rec) {
      ec = deadline->passed ? error_code(beast::error::timeout) : rec;
      break;
    }
    buffer.commit(n);
  }
  deadline->over = true;
  timer.cancel();
  co_return ec;
}

// A connection that ended between requests, or before a byte of the next: nothing to answer.
bool ended_quietly(const error_code& hec, const http1::RequestReader& parser) {
  return hec == beast::http::error::end_of_stream || hec == beast::error::timeout ||
         hec == asio::error::operation_aborted || hec == asio::error::connection_reset ||
         hec == asio::error::eof || !parser.got_some();
}

// A request's record begins: its start, its method and path (never the query), its id (the
// client's when acceptable, else a new one).
void begin_request(Worker& w, const http1::RequestHead& head, telemetry::RequestRecord& rec) {
  rec.reset();
  rec.start = w.shared.clock.now();
  if (w.shared.observer) w.shared.observer->on_request_start();
  rec.method = head.method_text;
  rec.path.assign(head.target, 0, head.target.find('?'));
  if (auto id = head.fields.get("x-request-id"); acceptable_request_id(id))
    rec.request_id = id;
  else
    new_request_id(w.rng, rec.request_id);
  if (w.shared.tracer) begin_request_trace(w, head, rec);
}

// Who sent the request: its key or token checked against the snapshot's clients (without client
// keys or token issuers everyone is the anonymous client: no field lookups).
clients::Authentication authenticate_caller(Worker& w, const Snapshot& snapshot,
                                            const http1::RequestHead& head,
                                            const http::RequestTarget& target) {
  clients::Authentication auth;
  if (!snapshot.client_auth.enabled()) {
    auth.identity = clients::ClientAuthenticator::anonymous();
    return auth;
  }
  clients::PresentedCredentials presented{head.fields.get("api-key"),
                                          head.fields.get(beast::http::field::authorization),
                                          head.fields.get("x-api-key")};
  // A browser's WebSocket cannot send headers: its key comes another way.
  if (presented.api_key.empty() && presented.authorization.empty() &&
      websocket::is_websocket_path(target.path))
    presented.api_key = websocket::browser_key(head.fields.get("sec-websocket-protocol"), target.query);
  return snapshot.client_auth.authenticate(presented, w.verified_tokens, w.shared.clock);
}

// How a request's body is taken in, decided from its head: refused (too large by its length),
// streamed (a length above the threshold), or buffered (a chunked one up to the threshold, then
// maybe streamed: `stop_past`). `limit` names the setting a body too large is over.
struct IntakeStart {
  bool too_large = false;
  bool stream = false;
  std::string_view limit;
  std::uint64_t stop_past = std::numeric_limits<std::uint64_t>::max();
  http::BodyLimits limits;
  http::BodyKind kind = http::BodyKind::Request;
  std::optional<std::uint64_t> length;  // none: chunked
};

IntakeStart start_intake(const http::BodyLimits& limits, http::BodyKind kind,
                         std::optional<std::uint64_t> length, http1::RequestReader& parser) {
  IntakeStart in;
  in.limits = limits;
  in.kind = kind;
  in.length = length;
  if (length) {
    const http::BodyPlan plan = plan_known_length(limits, kind, *length);
    in.too_large = plan.intake == http::BodyIntake::TooLarge;
    in.stream = plan.intake == http::BodyIntake::Stream;
    in.limit = plan.limit;
  } else {  // chunked: buffered until it ends, or (an upload) grows past the threshold
    const http::ChunkedLimit held = chunked_buffering_limit(limits, kind);
    parser.body_limit(held.bytes);
    in.limit = held.limit;
    in.stop_past = held.stream_past;
  }
  return in;
}

// A request's body intake planned from its head (docs/stateful-apis.md): buffered, or (a large
// upload) left to stream to the backend chosen. A length over the limits, or one that would pass
// what may be buffered at once, is refused (`refused`) before the client is asked for the body:
// nullopt then.
std::optional<IntakeStart> plan_intake(const config::Config& cfg, const http1::RequestHead& head,
                                       http1::RequestReader& parser, BodyShare& share, RefusedPtr& refused,
                                       telemetry::RequestRecord& rec) {
  const http::BodyLimits limits{cfg.stream_request_body_bytes, cfg.max_request_body_bytes,
                                cfg.max_streamed_body_bytes};
  const std::optional<std::uint64_t> length = parser.chunked() ? std::nullopt : parser.content_length();
  const IntakeStart intake = start_intake(
      limits, http::body_kind(head.fields.get(beast::http::field::content_type)), length, parser);
  if (intake.too_large || (length && !intake.stream && !share.grow_to(*length))) {
    refuse_body_read(
        intake.too_large ? error_code(beast::http::error::body_limit) : asio::error::no_buffer_space,
        intake.limit, refused, head.version, rec);
    return std::nullopt;
  }
  return intake;
}

// A client connection's state, on the heap: a session's frame refers to it, and a WebSocket
// session that a request opens takes it whole (relay_opened_session), so that the frames of the
// request that opened it end. The forwarded request's job (in forward_buffers), and a session
// taken out of it, come last: they refer to the rest.
struct ClientConnection {
  ClientConnection(Worker& worker, Socket socket)
      : w(worker),
        stream(worker.sweeper, std::move(socket)),
        registration(worker, stream),
        body_share(worker.shared.buffered_bodies) {}
  // The request's end: its access line, metrics and spans, then what it held let go (the
  // configuration it routed with, which its record views; its caller; its target; its body's
  // share of MAX_BUFFERED_BODIES_BYTES, held until then: a copy of the body may live in its job).
  void end_request() {
    session.reset();  // (a relay that threw: its counts on the backend end first)
    finish_request(w, rec);
    auth = {};
    target.reset();
    leased.reset();
    body_share.release();
  }

  Worker& w;
  io::TimedSocket stream;
  SessionRegistration registration;
  // Reused for every request on this connection, so that steady state allocates little.
  beast::flat_buffer buffer;
  http1::RequestHead head;
  telemetry::RequestRecord rec;
  http::FramingInput framing;
  // The current request's configuration, target and caller: the identity's views stay valid to
  // the end of the request (the snapshot lease keeps a key's name, and identity->hold a token's
  // VerifiedToken).
  std::optional<SnapshotCache::Lease> leased;
  std::optional<http::RequestTarget> target;
  clients::Authentication auth;
  BodyShare body_share;
  ForwardBuffers forward_buffers;
  // A WebSocket session the current request opened, out of its job (relay_opened_session).
  std::unique_ptr<OpenedSession> session;
};
using ConnectionPtr = std::unique_ptr<ClientConnection>;

// Ends a request when the session's iteration ends, however; not when its WebSocket session was
// handed off (that ends it).
struct RequestEnd {
  ClientConnection& c;
  bool handed_off = false;
  ~RequestEnd() {
    if (!handed_off) c.end_request();
  }
};

void close_client_socket(io::TimedSocket& stream) {
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
}

// A client connection's socket as a session uses it.
void prepare_client_socket(io::TimedSocket& stream) {
  error_code ignored;
  stream.socket().set_option(tcp::no_delay(true), ignored);
  // A close that comes with a request's bytes must show in the look below (io/draining_read).
  stream.report_peer_close();
}

// A head that could not be read: 400 (or 431), and the connection closes.
Task<> answer_head_error(io::TimedSocket& stream, const error_code& hec) {
  ErrorReply r;
  std::string message;  // r.message is a view: the text must outlive the write
  refuse_head_read(hec, r, message);
  co_await write_error_reply(stream, r, std::chrono::seconds(5));
}

// The interim answer an `Expect: 100-continue` waits for before it sends its body.
Task<error_code> send_continue(io::TimedSocket& stream, const http1::RequestHead& head,
                               std::chrono::seconds timeout) {
  const std::string_view cont =
      head.version == 10 ? "HTTP/1.0 100 Continue\r\n\r\n" : "HTTP/1.1 100 Continue\r\n\r\n";
  stream.expires_after(timeout);
  auto [ec, n] = co_await asio::async_write(stream, asio::buffer(cont), use_tuple);
  co_return ec;
}

// A large upload's body, left unread for the forwarder to stream: what was read of it already
// (a chunked body's start) goes first.
void begin_streamed(StreamedBody& body, http1::RequestHead& head, std::optional<std::uint64_t> length,
                    const config::Config& cfg, http1::RequestReader& parser) {
  body.prefix = std::move(head.body);
  head.body.clear();
  body.length = length;
  body.pause_timeout = cfg.http_timeout;
  parser.body_limit(cfg.max_streamed_body_bytes);
}

// What a connection keeps of its buffers between requests, each: the room typical requests need
// (their reuse is what spares steady state its allocations), not a long prompt's. Kept, a
// 64 KiB prompt's room made an idle keep-alive connection 72.5 KiB instead of 8.6.
constexpr std::size_t kKeptRoomBytes = 8 * 1024;

void release_large_rooms(beast::flat_buffer& input, ForwardBuffers& buffers) {
  if (input.capacity() > kKeptRoomBytes && input.size() <= kKeptRoomBytes) input.shrink_to_fit();
  buffers.release_large(kKeptRoomBytes);  // the request's body (client_body) among them
}

// What a connection lends each request it forwards: its read buffer, its request's body and fields,
// which an event stream's relay frees while it waits.
void lend_buffers(ForwardBuffers& lent, beast::flat_buffer& input, http1::RequestHead& head) {
  lent.client_input = &input;
  lent.client_body = &head.body;
  lent.client_fields = &head.fields;
}

// Between two requests: the rooms a large one left given back, the read buffer ready, the parser
// limited to a head (the body's intake is planned once the caller is known), the socket's deadline
// the idle timeout's.
void await_next_request(const config::Config& cfg, io::TimedSocket& stream, beast::flat_buffer& buffer,
                        ForwardBuffers& lent, http1::RequestReader& parser,
                        SessionRegistration& registration) {
  constexpr std::size_t kInputBufferBytes = 2048;  // most requests in one read (Beast starts at 512)
  release_large_rooms(buffer, lent);
  if (buffer.capacity() < kInputBufferBytes) buffer.reserve(kInputBufferBytes);
  parser.header_limit(16 * 1024);
  parser.body_limit(std::nullopt);
  registration.entry().idle = buffer.size() == 0;  // a drain may cut an idle wait short
  // Nothing has reached the socket since the last request's read emptied it (the worker has seen
  // no event for it, not even a close): a recv() would find EAGAIN, so the read waits for the next
  // request's event at once. A client sends its next request after our answer.
  if (buffer.size() == 0 && !stream.bytes_may_have_arrived()) stream.next_read_awaits_answer();
  stream.expires_after(cfg.client_idle_timeout);
}

// A new configuration's backend URLs, told to this worker's pool once.
void sync_origins(Worker& w, const Snapshot& snapshot) {
  if (snapshot.generation == w.origins_generation) return;
  for (std::size_t i = 0; i < snapshot.backends.size(); ++i)
    w.upstreams.sync_origin(snapshot.table.member(i).id, snapshot.backends[i].url);
  w.origins_generation = snapshot.generation;
}

// A WebSocket session its request opened (the backend's 101 came), on the connection it now
// owns: relayed until both sides are done, then the request ends (priced, the caller's budgets
// settled, its access line) and the connection closes. A coroutine of its own, so that an idle
// session holds no frame of the request that opened it (docs/benchmarks.md, Realtime).
Task<> relay_opened_session(ConnectionPtr conn) {
  ClientConnection& c = *conn;
  const RequestEnd request_end{c};  // however the relay ends
  c.session = c.forward_buffers.job.take_session();
  c.forward_buffers.job.end();  // the job's memory back to the worker now, not in an hour
  co_await c.session->relay();
  c.session->end();
  c.session.reset();
  close_client_socket(c.stream);
}

Task<> serve_client(ConnectionPtr conn);
void after_stream_round(ConnectionPtr conn, std::exception_ptr e, const Relayed& r);

// An event stream its request committed to the client, on the connection it now owns: what came
// relayed (the exchange's rounds, in a coroutine of their own), then after_stream_round. No
// coroutine of the request's, nor one of its own, waits with the stream for its next event (so a
// waiting stream holds no frame: docs/benchmarks.md, streaming memory).
void relay_committed_stream(ConnectionPtr conn) {
  Worker& w = conn->w;
  ForwardJobSlot& job = conn->forward_buffers.job;
  asio::co_spawn(w.ioc, job.relay_stream(),
                 [conn = std::move(conn)](std::exception_ptr e, Relayed r) mutable {
                   after_stream_round(std::move(conn), e, r);
                 });
}

// A waiting stream woken (its next event, its end, a failure): its rounds without a coroutine
// when the client takes each write at once, as usual; else in one (relay_committed_stream).
void relay_woken_stream(ConnectionPtr conn) {
  std::optional<Relayed> now;
  try {
    now = conn->forward_buffers.job.relay_stream_now();
  } catch (...) {
    return after_stream_round(std::move(conn), std::current_exception(), Relayed{});
  }
  if (now) return after_stream_round(std::move(conn), nullptr, *now);
  relay_committed_stream(std::move(conn));
}

// A waiting stream's wait dropped uncalled (its worker stopping): the request ends all the same,
// as it did when a frame of its own ended it.
void drop_committed_stream(ConnectionPtr conn) {
  conn->forward_buffers.job.end();
  conn->end_request();
}

// The stream waits for its next event (its wait owns the connection and starts the next rounds),
// or it has ended: then the attempt and the request end, and the connection reads its next
// request in a new session coroutine, or closes.
void after_stream_round(ConnectionPtr conn, std::exception_ptr e, const Relayed& r) {
  ClientConnection& c = *conn;
  ForwardJobSlot& job = c.forward_buffers.job;
  bool keep = false;
  try {
    if (!e && r.end == RelayEnd::HandedOff) {
      job.await_stream(
          StreamWaker::make<ClientConnection, relay_woken_stream, drop_committed_stream>(std::move(conn)));
      return;
    }
    if (!e) keep = job.end_stream(r);
  } catch (...) {
    if (!conn) return log_session_exception(std::current_exception());  // its waker's drop ended it
    e = std::current_exception();
  }
  job.end();  // its memory back to the worker while the connection idles
  c.end_request();
  if (e) log_session_exception(e);
  if (!keep) return close_client_socket(c.stream);
  Worker& w = c.w;
  asio::co_spawn(w.ioc, serve_client(std::move(conn)), log_session_exception);
}

// A request whose job ended with a WebSocket session or an event stream under way: the
// connection goes with it to a coroutine of its own. (co_spawn runs that coroutine's first step
// at once, inside serve_client's co_return: safe because that step always suspends, or leaves the
// connection to a wait, before it could end the connection that serve_client's locals refer to.)
void hand_off_connection(ConnectionPtr conn) {
  Worker& w = conn->w;
  if (conn->forward_buffers.job.session_ready())
    asio::co_spawn(w.ioc, relay_opened_session(std::move(conn)), log_session_exception);
  else
    relay_committed_stream(std::move(conn));
}

// A connection whose client may still be sending a body that smartlb did not read, closed after a
// lingering read (io/lingering_close.hpp) in a coroutine of its own, so that its wait holds only the
// connection.
Task<> linger_then_close(ConnectionPtr conn) { co_await io::close_lingering(conn->stream, conn->buffer); }

// A connection's end: at once, or lingering while its client may still be sending.
void end_connection(ConnectionPtr conn, bool client_sending) {
  if (!client_sending) return close_client_socket(conn->stream);
  Worker& w = conn->w;
  asio::co_spawn(w.ioc, linger_then_close(std::move(conn)), log_session_exception);
}

// One client connection, request after request. Each request's intake (its head and caller
// checked, its body read or left to stream) is a do/while(false) that every refusal leaves: each
// way out but the last closes the connection after the answer `refused` holds, written at one
// place (each awaited call has its own room in the session's frame, which every open stream and
// idle connection holds).
Task<> serve_client(ConnectionPtr conn) {
  ClientConnection& c = *conn;
  Worker& w = c.w;
  const config::Config& cfg = w.shared.cfg;
  prepare_client_socket(c.stream);
  lend_buffers(c.forward_buffers, c.buffer, c.head);
  bool unread = false;  // the client may still be sending: the connection closes lingering

  for (;;) {
    if (w.draining) break;
    http1::RequestReader parser(c.head);
    await_next_request(cfg, c.stream, c.buffer, c.forward_buffers, parser, c.registration);
    error_code hec = c.stream.done(co_await read_http(c.stream, c.buffer, parser, http1::ReadGoal::header));
    c.registration.entry().idle = false;
    if (hec) {
      unread = !ended_quietly(hec, parser);
      if (unread) co_await answer_head_error(c.stream, hec);
      break;
    }

    begin_request(w, c.head, c.rec);
    RequestEnd request_end{c};  // every way out of this iteration ends the request once

    std::unique_ptr<StreamedBody> streamed;  // a large upload's body, left unread for the forwarder
    RefusedPtr refused;                      // smartlb's answer, when it refuses the request
    c.target = http::parse_request_target(c.head.target);
    bool taken = false;  // the request's intake (see above) went through
    do {
      // A bad head or method: answered before the body is read, so the connection closes after.
      if (refuse_head(c.head, cfg, c.framing, c.target.has_value(), refused, c.rec)) break;
      const SnapshotCache::Lease& snapshot = c.leased.emplace(w.snapshots.acquire());
      sync_origins(w, *snapshot);
      c.auth = authenticate_caller(w, *snapshot, c.head, *c.target);
      if (c.auth.wait_for) {  // the issuer's keys are being fetched (first fetch, or an unknown kid)
        co_await clients::jwt::wait_for_keys(std::move(c.auth.wait_for), kTokenKeyWait);
        c.auth = authenticate_caller(w, *snapshot, c.head, *c.target);
      }
      if (!c.auth.identity) {
        // The body is unread, so the connection cannot carry another request.
        refuse_caller(c.auth, refuse(refused, c.head.version, c.rec).reply, c.rec);
        break;
      }
      c.rec.client.assign(c.auth.identity->name);
      if (!parser.is_done()) {
        const std::optional<IntakeStart> intake =
            plan_intake(cfg, c.head, parser, c.body_share, refused, c.rec);
        if (!intake) break;
        bool stream_it = intake->stream;
        if (c.head.fields.contains(beast::http::field::expect)) {
          if (refuse_expectation(c.head, refused, c.rec)) break;
          if (c.stream.done(co_await send_continue(c.stream, c.head, cfg.http_timeout))) {
            c.rec.client_aborted = true;
            break;
          }
        }
        if (!stream_it) {
          // Usually the body came with the head: then no read, and no coroutine, is needed.
          bool progressed = false;
          error_code bec;
          if (!feed_buffered(c.buffer, parser, http1::ReadGoal::message, progressed, bec) &&
              c.head.body.size() <= intake->stop_past)
            bec = co_await read_body(c.stream, c.buffer, parser, cfg.http_timeout, c.head.body,
                                     intake->stop_past, c.body_share);
          if (bec) {
            refuse_body_read(bec, intake->limit, refused, c.head.version, c.rec);
            break;
          }
          stream_it = !intake->length &&
                      stream_chunked(intake->limits, intake->kind, c.head.body.size(), parser.is_done());
        }
        if (stream_it)
          begin_streamed(*(streamed = std::make_unique<StreamedBody>(c.stream, c.buffer, parser)), c.head,
                         intake->length, cfg, parser);
      }
      taken = true;
    } while (false);
    if (!taken) {
      if (refused) co_await write_error_reply(c.stream, refused->reply, std::chrono::seconds(5));
      unread = !parser.is_done();
      break;
    }

    bool keep = co_await forward_request(w, **c.leased, c.stream, c.head, *c.target, *c.auth.identity, c.rec,
                                         c.forward_buffers, streamed.get());
    // A WebSocket's 101, or an event stream under way: it takes the connection.
    if (c.forward_buffers.job.session_ready() || c.forward_buffers.job.stream_ready()) {
      request_end.handed_off = true;
      co_return hand_off_connection(std::move(conn));
    }
    c.forward_buffers.job.end();  // its memory back to the worker while the connection idles
    // A body not read to its end leaves the connection unable to carry another request.
    unread = streamed && streamed->unread();
    if (!keep || unread) break;
  }
  end_connection(std::move(conn), unread);
}

}  // namespace

void log_session_exception(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("connection ended by an internal error: {}", ex.what());
  }
}

Task<> run_client_session(Worker& w, Socket socket) {
  return serve_client(std::make_unique<ClientConnection>(w, std::move(socket)));
}

}  // namespace smartlb::net
