#pragma once
// The seam between a request's policy (ForwardJob: which target, what a failure costs, what to do
// next) and the mechanism that moves its bytes (UpstreamExchange: connections, reads, writes).
// The policy asks an Exchange for one attempt at a time and is told what happened; it never sees
// a socket, a pool or the worker, and its tests fake this interface (Envoy's router over
// RouterFilterInterface; pingora's ProxyHttp hooks over proxy_h1).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/url.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/stream_waker.hpp"
#include "smartlb/net/websocket_session.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::net {

struct StreamedBody;  // a large upload's body (net/streamed_body.hpp)

// How sending a streamed body ended.
enum class StreamEnd : std::uint8_t {
  Sent,            // the whole body went to the backend (or it was not started)
  ClientLeft,      // the client closed, stalled past the timeout, or its connection failed
  TooLarge,        // the body passed MAX_STREAMED_BODY_BYTES (chunked: found mid-body)
  Malformed,       // the client's chunked framing was bad
  UpstreamFailed,  // the backend's connection failed or stalled while the body was sent
};

// What one attempt sends: the request head (a small body rides in it) and a larger body.
struct UpstreamCall {
  routing::BackendId backend;
  const config::BackendUrl& url;
  std::string_view head;
  std::string_view body;             // sent after the head; empty when it rode in it
  std::chrono::seconds timeout;      // for the response head
  StreamedBody* streamed = nullptr;  // a large upload's body, sent after the head (`body` empty)
};

// What came back: an answer's head (Exchange::answer_head), or a failure.
struct Exchanged {
  bool answered = false;
  routing::TransportFailure failure = routing::TransportFailure::Lost;  // when not answered
  std::string detail;                                                   // for logs
  StreamEnd body_end = StreamEnd::Sent;  // a streamed body: how its sending ended
  // When the request began to go out on its connection, once one was had (0: none was). A new
  // connection's handshake comes before it: the backend's limiter saw the request then, not
  // when the attempt began.
  base::MonoNanos written = 0;
};

// How the answer goes to the client.
struct RelayOptions {
  std::string_view backend_name;  // x-smartlb-backend
  std::string_view extra_fields;  // "Name: value\r\n" lines of ours (the caller's budget)
  std::string_view request_id;
  // How long an event stream's start may be held back waiting for content: past it, with
  // `fail_over_stall` (a first-token deadline), the attempt fails over as stalled (nothing went to
  // the client); without, what is held is relayed as it is.
  base::Nanos hold_timeout{0};
  bool fail_over_stall = false;
  // A stateful API's answer: its ids get this tag (a JSON body read whole up to a limit, an
  // event stream event by event). Null: the bytes go as they are.
  const stateful::ResourceTag* tag_ids = nullptr;
  std::string_view prefix{};  // body bytes read already, written first (as they are)
  // An event stream whose head went out and whose next event is awaited may end the relay as
  // HandedOff: its rounds go on in relay_committed(), called by whoever takes the stream over.
  bool may_hand_off = false;
};

// How reading a whole body ended.
enum class BodyRead : std::uint8_t { Done, OverLimit, Failed };

// How a wait for capacity ended: its time passed, the client left meanwhile (nobody is left to
// answer), or a drain began (the request is answered now rather than cut at the drain's end).
enum class CapacityWaitEnd : std::uint8_t { Waited, ClientLeft, Draining };

// How a relay ended: the client's connection may carry another request, or not; or the
// response never reached the client and the next target is to be tried; or (HandedOff, with
// RelayOptions::may_hand_off, and from relay_committed()) an event stream committed to the client
// waits for its next event, its rounds to go on in Exchange::relay_committed().
enum class RelayEnd : std::uint8_t { Keep, Close, FailOver, HandedOff };
// What the backend did wrong during a relay, when it did.
enum class RelayFault : std::uint8_t {
  None,
  ErrorEvent,  // FailOver: the held stream's first event was an error
  Transport,   // FailOver while held, or Close after the head went out (the client's stream cut)
  Stalled,     // FailOver: no content within the hold's first-token deadline
};
struct Relayed {
  RelayEnd end = RelayEnd::Close;
  RelayFault fault = RelayFault::None;
  routing::TransportFailure failure = routing::TransportFailure::Lost;  // fault == Transport
  std::string_view why{};          // for the log of a stream that failed over
  base::MonoNanos content_at = 0;  // a held stream's first content arrived then (0: none was seen)
};

class Exchange {
 public:
  // A pooled or new connection, the request written, the response head read.
  virtual Task<Exchanged> send(const UpstreamCall& call) = 0;
  // The head of the answer send() got (valid until the attempt's connection is let go).
  virtual const http1::ResponseHead& answer_head() const = 0;
  // A failed-over answer: a small body read and dropped so that the connection can be reused.
  virtual Task<void> drain_or_close() = 0;
  // The answer's connection let go without reading on (never pooled).
  virtual void discard() = 0;
  // The answer, to the client, as it arrives.
  virtual Task<Relayed> relay(const RelayOptions& options) = 0;
  // The rest of an event stream whose relay ended HandedOff, as it comes. HandedOff again when
  // the stream waits for its next event on a plain connection holding no buffer and no frame:
  // await_committed() then says when to call this again.
  virtual Task<Relayed> relay_committed() = 0;
  // The same without a coroutine, as long as each round's write goes out whole at once (the usual
  // wake): how it ended, HandedOff when it waits again, or nothing when relay_committed() is to
  // go on (a write the client's socket took only part of, a read that waits with a buffer).
  virtual std::optional<Relayed> relay_committed_now() { return std::nullopt; }
  virtual void await_committed(StreamWaker wake) = 0;
  // The answer's body, appended to `out` until it ends or passes `limit` bytes.
  virtual Task<BodyRead> read_body(std::string& out, std::size_t limit) = 0;
  // An answer whose body is known whole (a held one), written with its own Content-Length.
  virtual Task<Relayed> write_answer(const http1::ResponseHead& res, std::string_view body,
                                     const RelayOptions& options) = 0;
  // smartlb's own answer. Whether the client's connection may carry another request.
  virtual Task<bool> refuse(const ErrorReply& reply) = 0;
  // After a verified 101: the client's 101 and the session, until both sides are done.
  virtual Task<void> open_session(const WebSocketSession& session) = 0;
  // Whether the client's connection may carry another request after this one.
  virtual bool client_may_go_on() const = 0;
  // Waits `delay` (a target's retry_config: the one wait smartlb makes, when a file asks for it).
  virtual Task<void> pause(std::chrono::milliseconds delay) = 0;
  // Waits `delay` for capacity (a priority class's max_queue_seconds) while watching the client
  // and the worker's drain, either of which ends it at once.
  virtual Task<CapacityWaitEnd> wait_for_capacity(base::Nanos delay) = 0;

 protected:
  ~Exchange() = default;
};

}  // namespace smartlb::net
