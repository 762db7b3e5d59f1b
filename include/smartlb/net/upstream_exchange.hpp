#pragma once
// The mechanism of forwarding: the bytes of one request with one upstream, and of its answer to
// the client. A pooled or new connection, the request written, the response head read (past
// interim answers); then either the response relayed as it arrives -- a 2xx event stream's
// start held back until it shows content -- or, when the policy fails over, a small body read
// and dropped so that the connection can be reused. It knows no rules, budgets or backend
// states, and judges nothing: it reports what happened through the Exchange interface, and the
// policy (ForwardJob) decides and routing accounts (pingora's split of proxy_trait.rs and
// proxy_h1.rs; YARP's HttpForwarder).
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "smartlb/http1/http1_parser.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/client_watch.hpp"
#include "smartlb/net/exchange.hpp"
#include "smartlb/net/exchange_context.hpp"
#include "smartlb/net/forward.hpp"
#include "smartlb/net/relay_scratch.hpp"
#include "smartlb/net/streamed_body.hpp"
#include "smartlb/net/upstream.hpp"
#include "smartlb/telemetry/request_record.hpp"
#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb::net {

// What a transport error says of the backend: a timeout, bad HTTP, or a connection lost.
routing::TransportFailure classify_transport_error(const error_code& ec);

class UpstreamExchange final : public Exchange {
 public:
  // `rec` gets what the relay saw: the status sent, the bytes, usage, who left first.
  UpstreamExchange(const ExchangeContext& ctx, io::TimedSocket& client, const http1::RequestHead& req,
                   telemetry::RequestRecord& rec, ForwardBuffers& buffers)
      : ctx_(ctx), client_(client), req_(req), rec_(rec), buffers_(buffers) {}

  // A pooled connection (a stale one is retried once on a new one, blaming no one) or a new
  // one; the request written; the response head read.
  // With a streamed body (`call.streamed`): always a new connection (a pooled one the backend
  // closed while it idled would be found out only mid-body, too late to retry), the head
  // written, then the body, then the response head read. A failure before the first body byte
  // leaves `started` false: the caller may fail over.
  Task<Exchanged> send(const UpstreamCall& call) override;
  const http1::ResponseHead& answer_head() const override { return conn_->head; }
  // A failed-over response: a small body is read and dropped so the connection can be reused;
  // a larger one, or one without framing, closes it.
  Task<void> drain_or_close() override;
  void discard() override;
  Task<Relayed> relay(const RelayOptions& options) override;
  Task<Relayed> relay_committed() override;
  std::optional<Relayed> relay_committed_now() override;
  void await_committed(StreamWaker wake) override;
  // The response body (buffered_answer.cpp).
  Task<BodyRead> read_body(std::string& out, std::size_t limit) override;
  // An answer whose body is known whole (`res`: a copy, or the head of a connection not yet
  // given back), written with its own Content-Length.
  Task<Relayed> write_answer(const http1::ResponseHead& res, std::string_view body,
                             const RelayOptions& options) override;
  Task<bool> refuse(const ErrorReply& reply) override;
  Task<void> open_session(const WebSocketSession& session) override;
  bool client_may_go_on() const override;
  Task<void> pause(std::chrono::milliseconds delay) override;
  Task<CapacityWaitEnd> wait_for_capacity(base::Nanos delay) override;

 private:
  enum class HoldEnd : std::uint8_t { Release, FailOver, ClientLeft };
  Task<Exchanged> send_streamed(const UpstreamCall& call, StreamedBody& body);
  // Reads the response head past interim answers (100 Continue, 103 Early Hints) into
  // `c.head`; `got_bytes`: something came.
  Task<error_code> read_response_head(UpstreamConnection& c, std::chrono::seconds timeout, bool& got_bytes);
  Task<HoldEnd> hold_stream_start(UpstreamConnection& conn, http1::ResponseReader& p, std::string& held,
                                  std::string_view& released, ClientWatch& watch, Relayed& outcome,
                                  const RelayOptions& o, bool& buffer_fitted);
  Task<void> drain_or_close(UpstreamPtr conn);
  Task<BodyRead> read_body(UpstreamConnection& conn, std::string& out, std::size_t limit);
  // `own_length`: the body's length changes, so the backend's Content-Length is not passed on.
  void write_response_head(const http1::ResponseHead& res, const RelayOptions& o, bool chunked, bool keep,
                           bool own_length = false);
  // The response as it arrives; an event stream's ids tagged when `tag_events`. Not a coroutine:
  // it sets body_relay_ up, and relay_rounds is the one frame a response's relay needs (`options`
  // live in the caller's co_await for as long as it).
  Task<Relayed> relay_body(UpstreamPtr conn, const RelayOptions& options, bool tag_events);
  // The rounds (read what came, write it), on body_relay_, until the body ends; with HandOff,
  // until an event stream whose head went out waits for its next event; Committed (the rest of a
  // handed-off one), until it waits on a quiet plain connection (await_committed). `start`: the
  // relay's options, for its start (the head, an event stream's held start); null when committed.
  enum class Rounds : std::uint8_t { Whole, HandOff, Committed };
  struct BodyRelay;
  Task<Relayed> relay_rounds(Rounds rounds, const RelayOptions* start = nullptr);
  // An event stream's start: its first content held back (fail over, or the client left: how the
  // relay ended), then its head, at once when its body must be waited for.
  Task<std::optional<Relayed>> start_event_stream(const RelayOptions& options);
  // After await_committed's wait: what it found read at once. False when nothing is to be relayed
  // yet (the stream waits again).
  bool read_after_wake(BodyRelay& r, error_code& ec);
  // One round's steps around its write, shared by relay_rounds and relay_committed_now: what the
  // read just done brought (after `held_start`), as the buffers of one write in `round` (false:
  // the read failed, `ec`); once written, its bytes to the usage reader (true: the body ended).
  bool gather_round(BodyRelay& r, RelayRound& round, std::string_view held_start, error_code& ec);
  bool round_written(BodyRelay& r, const RelayRound& round);
  // How the relay ends: its body whole (the connection pooled or closed), or its read failed.
  Relayed body_ended(BodyRelay& r);
  Relayed read_failed(BodyRelay& r, const error_code& ec);
  // An event stream's body bytes, within `timeout` (upstream_exchange_relay.cpp); a committed
  // stream's wait without a buffer, and the read at once after it (upstream_exchange_committed.cpp).
  static Task<error_code> read_body_bytes(UpstreamConnection& c, http1::ResponseReader& p,
                                          std::chrono::seconds timeout, bool event_stream, bool& fitted,
                                          EventRooms& rooms);
  static bool may_wait_bufferless(UpstreamConnection& c);
  static bool read_after_wait(UpstreamConnection& c, http1::ResponseReader& p, error_code& ec);
  // A JSON answer of a stateful API: read whole (up to a limit), its ids tagged, written.
  Task<Relayed> relay_tagged_json(UpstreamPtr conn, const RelayOptions& options);
  Task<Relayed> relay(UpstreamPtr conn, const RelayOptions& options);
  // How a response's body goes to the client (outside the relay's coroutine frame).
  struct BodyPlan {
    bool chunked = false;  // framed by us: the backend's length is unknown
    bool keep = false;     // the client's connection may carry another request
    bool hold = false;     // a 2xx event stream: its start is held back
    // An event stream (plainly encoded): it waits long between events, holding a read buffer
    // cut to what its events need (event_stream_buffer.hpp).
    bool event_stream = false;
    telemetry::UsageSniffer::Mode usage = telemetry::UsageSniffer::Mode::Off;
  };
  BodyPlan plan_body(const http1::ResponseHead& res, bool rewrites = false) const;
  BodyPlan start_readers(RelayScratch& scratch, const http1::ResponseHead& res, const RelayOptions& options,
                         bool tag_events);
  Relayed client_left(UpstreamConnection& conn);
  Relayed held_start_failed(UpstreamConnection& conn, Relayed failed);
  Relayed body_never_came(UpstreamConnection& conn, const error_code& ec);
  Relayed cut_short(UpstreamConnection& conn, const error_code& ec);
  bool read_usage(telemetry::UsageSniffer& usage, std::span<const std::string_view> runs, bool last);
  void record_usage(const telemetry::TokenUsage& u);
  void free_stream_idle_room();
  void free_sent_texts(UpstreamConnection& conn);
  void pool_or_close(UpstreamPtr conn, bool keep_alive);

  const ExchangeContext& ctx_;
  io::TimedSocket& client_;
  const http1::RequestHead& req_;
  telemetry::RequestRecord& rec_;
  ForwardBuffers& buffers_;
  // What a relay carries from round to round. Not in relay_body's frame: a committed event
  // stream's rounds go on in relay_committed() once the request's frames have ended
  // (docs/benchmarks.md, streaming memory); in the job's memory, which a request has anyway.
  struct BodyRelay {  // (declared above)
    explicit BodyRelay(RelayScratchLease::Spares& spares) : scratch(spares) {}
    ~BodyRelay();
    BodyRelay(const BodyRelay&) = delete;
    BodyRelay& operator=(const BodyRelay&) = delete;
    RelayScratchLease scratch;  // the body's readers: usage, stateful ids, the held start
    UpstreamPtr conn;
    BodyPlan plan;
    ClientWatch watch;               // armed once the client waits on the backend
    std::string tagged;              // this round's events, their ids tagged
    std::string_view pending;        // a stream's held-back start: the first bytes written
    base::MonoNanos content_at = 0;  // the held start's first content
    bool buffer_fitted = false;      // only an event stream's buffer is cut (event_stream_buffer)
    bool head_sent = false;
    // A committed stream's wait for its next event (await_committed): the buffer's room lent to
    // the worker meanwhile, and what the wait ended with.
    bool waited = false;
    std::size_t room = 0;
    error_code woke;
    // What relay_committed_now wrote in part: the rest, written first by relay_committed.
    std::string unsent;
  };
  std::optional<BodyRelay> body_relay_;
  UpstreamPtr conn_;                             // the current attempt's connection, once answered
  std::optional<http1::ResponseReader> parser_;  // the current attempt's response
  // The backend answered before a streamed body was whole: neither connection can carry another
  // request (the client's rest of the body is unread, the backend's request is cut short).
  bool answered_mid_body_ = false;
};

}  // namespace smartlb::net
