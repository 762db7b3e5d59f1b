#pragma once
// The mechanism of forwarding: the bytes of one request with one upstream, and of its answer to
// the client. A pooled or new connection, the request written, the response head read (past
// interim answers); then either the response relayed as it arrives -- a 2xx event stream's
// start held back until it shows content -- or, when the policy fails over, a small body read
// and dropped so that the connection can be reused. It knows no rules, budgets or backend
// states: it reports what happened, and the forwarder (the policy) decides and accounts
// (pingora's split of proxy_trait.rs and proxy_h1.rs; YARP's HttpForwarder).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/http1/http1_parser.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/client_watch.hpp"
#include "smartlb/net/forward.hpp"
#include "smartlb/net/streamed_body.hpp"
#include "smartlb/net/upstream.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/stateful/resource_tag.hpp"
#include "smartlb/telemetry/request_record.hpp"
#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb::net {

struct Worker;

// What one attempt sends: the request head (a small body rides in it) and a larger body.
struct UpstreamCall {
  BackendId backend;
  const BackendUrl& url;
  std::string_view head;
  std::string_view body;             // sent after the head; empty when it rode in it
  std::chrono::seconds timeout;      // for the response head
  StreamedBody* streamed = nullptr;  // a large upload's body, sent after the head (`body` empty)
};

// What came back: a response head (in `conn->head`), or a transport failure.
struct Exchanged {
  UpstreamPtr conn;
  TransportFailure failure = TransportFailure::Lost;  // when !conn
  std::string detail;                                 // for logs
  // A streamed body: how its sending ended (Sent when it was not started, or went whole).
  StreamEnd body_end = StreamEnd::Sent;
};

// How the answer goes to the client.
struct RelayOptions {
  std::string_view backend_name;  // x-smartlb-backend
  std::string_view extra_fields;  // "Name: value\r\n" lines of ours (the caller's budget)
  std::string_view request_id;
  std::chrono::seconds hold_timeout;  // how long an event stream's start may be held back
  // A stateful API's answer: its ids get this tag (a JSON body read whole up to a limit, an
  // event stream event by event). Null: the bytes go as they are.
  const stateful::ResourceTag* tag_ids = nullptr;
  std::string_view prefix{};  // body bytes read already, written first (as they are)
};

// How reading a whole body ended.
enum class BodyRead : std::uint8_t { Done, OverLimit, Failed };

// How a relay ended: the client's connection may carry another request, or not; or the
// response never reached the client and the next backend is to be tried.
enum class RelayEnd : std::uint8_t { Keep, Close, FailOver };
struct Relayed {
  RelayEnd end = RelayEnd::Close;
  // FailOver: why (StreamError: the start was an error event; else the transport failure while
  // it was held). Close with a cause: the backend failed after the head went out (the client's
  // stream is cut short), to be accounted like any failure.
  FailureCause cause = FailureCause::None;
  std::string_view why{};  // for the log of a stream that failed over
};

struct RelayScratch;

class UpstreamExchange {
 public:
  // `rec` gets what the relay saw: the status sent, the bytes, usage, who left first.
  UpstreamExchange(Worker& w, TimedSocket& client, const RequestHead& req, RequestRecord& rec,
                   ForwardBuffers& buffers)
      : w_(w), client_(client), req_(req), rec_(rec), buffers_(buffers) {}

  // A pooled connection (a stale one is retried once on a new one, blaming no one) or a new
  // one; the request written; the response head read.
  // With a streamed body (`call.streamed`): always a new connection (a pooled one the backend
  // closed while it idled would be found out only mid-body, too late to retry), the head
  // written, then the body, then the response head read. A failure before the first body byte
  // leaves `started` false: the caller may fail over.
  Task<Exchanged> send(const UpstreamCall& call);
  // A failed-over response: a small body is read and dropped so the connection can be reused;
  // a larger one, or one without framing, closes it.
  Task<void> drain_or_close(UpstreamPtr conn);
  // The response, as it arrives.
  Task<Relayed> relay(UpstreamPtr conn, const RelayOptions& options);
  // The response body, appended to `out` until it ends or passes `limit` bytes (buffered_answer.cpp).
  Task<BodyRead> read_body(UpstreamConnection& conn, std::string& out, std::size_t limit);
  // An answer whose body is known whole (`res`: a copy, or the head of a connection not yet
  // given back), written with its own Content-Length.
  Task<Relayed> write_answer(const ResponseHead& res, std::string_view body, const RelayOptions& options);

 private:
  enum class HoldEnd : std::uint8_t { Release, FailOver, ClientLeft };
  Task<Exchanged> send_streamed(const UpstreamCall& call, StreamedBody& body);
  // Reads the response head past interim answers (100 Continue, 103 Early Hints) into
  // `c.head`; `got_bytes`: something came.
  Task<error_code> read_response_head(UpstreamConnection& c, std::chrono::seconds timeout, bool& got_bytes);
  Task<HoldEnd> hold_stream_start(UpstreamConnection& conn, http1::ResponseReader& p, std::string& held,
                                  std::string_view& released, ClientWatch& watch, FailureCause& failed,
                                  std::chrono::seconds timeout, bool& buffer_fitted);
  // `own_length`: the body's length changes, so the backend's Content-Length is not passed on.
  void write_response_head(const ResponseHead& res, const RelayOptions& o, bool chunked, bool keep,
                           bool own_length = false);
  // The response as it arrives; an event stream's ids tagged when `tag_events`. `options` by
  // value: relay() passes it on from the caller's frame.
  Task<Relayed> relay_body(UpstreamPtr conn, RelayOptions options, bool tag_events);
  // A JSON answer of a stateful API: read whole (up to a limit), its ids tagged, written.
  Task<Relayed> relay_tagged_json(UpstreamPtr conn, const RelayOptions& options);
  // How a response's body goes to the client (outside the relay's coroutine frame).
  struct BodyPlan {
    bool chunked = false;  // framed by us: the backend's length is unknown
    bool keep = false;     // the client's connection may carry another request
    bool hold = false;     // a 2xx event stream: its start is held back
    // An event stream (plainly encoded): it waits long between events, holding a read buffer
    // cut to what its events need (event_stream_buffer.hpp).
    bool event_stream = false;
    UsageSniffer::Mode usage = UsageSniffer::Mode::Off;
  };
  BodyPlan plan_body(const ResponseHead& res, bool rewrites = false) const;
  BodyPlan start_readers(RelayScratch& scratch, const ResponseHead& res, const RelayOptions& options,
                         bool tag_events);
  Relayed client_left(UpstreamConnection& conn);
  void record_usage(const TokenUsage& u);
  void free_stream_idle_room();
  void free_sent_texts(UpstreamConnection& conn);
  void pool_or_close(UpstreamPtr conn, bool keep_alive, bool event_stream);
  // Whether the client's connection may carry another request after this answer.
  bool client_may_go_on() const;

  Worker& w_;
  TimedSocket& client_;
  const RequestHead& req_;
  RequestRecord& rec_;
  ForwardBuffers& buffers_;
  std::optional<http1::ResponseReader> parser_;  // the current attempt's response
  // The backend answered before a streamed body was whole: neither connection can carry another
  // request (the client's rest of the body is unread, the backend's request is cut short).
  bool answered_mid_body_ = false;
};

}  // namespace smartlb::net
