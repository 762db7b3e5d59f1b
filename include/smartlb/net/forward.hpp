#pragma once
// Forwarding one client request: the entry point (src/net/forward_request.cpp), and the
// buffers a client connection lends to each request it forwards.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/clients/client_auth.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/io_vocabulary.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/net/stream_waker.hpp"
#include "smartlb/routing/rule_match.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

struct Worker;
struct ForwardBuffers;
struct StreamedBody;    // a large upload's body (net/streamed_body.hpp)
struct ForwardRequest;  // one request's policy and mechanism (forward_request.cpp)
struct Relayed;         // how a relay ended (net/exchange.hpp)

// A Realtime or Responses WebSocket session whose 101 the backend sent, taken out of its
// request's job (ForwardJob::take_session): what it holds while it is relayed (its counts on
// the backend, what its responses teach routing and the budgets) and what its end needs, so
// that neither the job nor the request's frames wait as long as the session lasts.
class OpenedSession {
 public:
  virtual ~OpenedSession() = default;
  virtual Task<void> relay() = 0;  // once: the client's 101, then both ways until both are done
  virtual void end() = 0;          // after the relay: priced, the caller's budgets settled
};

// Where a connection's current request keeps its policy and mechanism: memory borrowed from the worker's
// spares (Worker::spare_job_rooms) when the request starts and given back when it ends, so a
// request allocates no frame for it and an idle connection holds none.
class ForwardJobSlot {
 public:
  using Room = std::unique_ptr<std::byte[]>;
  using Spares = std::vector<Room>;
  static constexpr std::size_t kMaxSpare = 256;  // kept after a burst of concurrent requests

  ForwardJobSlot() = default;
  ~ForwardJobSlot() { end(); }
  ForwardJobSlot(const ForwardJobSlot&) = delete;
  ForwardJobSlot& operator=(const ForwardJobSlot&) = delete;
  // The request's end (after forward_request's task finished): its job is destroyed, its room
  // goes back to the spares.
  void end();
  // A WebSocket session the request opened (ForwardJob::session_ready), taken out of the job
  // once forward_request's task finished (then end() gives the job's memory back at once).
  bool session_ready() const;
  std::unique_ptr<OpenedSession> take_session();
  // An event stream the request committed to the client (ForwardJob::stream_ready), relayed to
  // its end once forward_request's task finished (ForwardJob::relay_stream, await_stream,
  // end_stream); then end() as for any request.
  bool stream_ready() const;
  Task<Relayed> relay_stream();
  std::optional<Relayed> relay_stream_now();
  void await_stream(StreamWaker wake);
  bool end_stream(const Relayed& r);

 private:
  friend Task<bool> forward_request(Worker&, const Snapshot&, io::TimedSocket&, http1::RequestHead&,
                                    const http::RequestTarget&, const clients::ClientIdentity&,
                                    telemetry::RequestRecord&, ForwardBuffers&, StreamedBody*);
  Spares* spares_ = nullptr;
  Room room_;
  ForwardRequest* job_ = nullptr;
};

// What a client connection lends to each request it forwards, so that message heads allocate
// nothing in steady state.
struct ForwardBuffers {
  std::string passed_fields;  // the client's fields that go upstream unchanged
  std::string request_head;   // rebuilt for each attempt
  std::string response_head;
  std::string edited_body;                      // the body with a target's overrides, when it has some
  std::vector<routing::MetadataPair> metadata;  // x-smartlb-metadata's members
  std::string budget_fields;                    // x-ratelimit-* of the caller's budgets
  // The request's charges to them: made by the connection's first request that has budgets and
  // reused by its later ones, so a connection whose callers have none holds none (it is most of
  // these buffers' size, and they live as long as the connection).
  std::unique_ptr<clients::BudgetAdmission> budget;
  // The client connection's read buffer: nothing reads it while an event stream is relayed, so
  // the relay frees its room when it is empty, and the connection takes it back before it
  // reads its next request.
  beast::flat_buffer* client_input = nullptr;
  // The request's body (the session's): an event stream frees it once no attempt can follow,
  // so a long prompt is not held for the minutes the stream lasts.
  std::string* client_body = nullptr;
  http1::HeaderList* client_fields = nullptr;  // ... and its head's fields, likewise
  ForwardJobSlot job;                          // last: its job refers to the rest

  // Frees the room of each text (the client's body and fields among them) holding more than `keep` bytes
  // of it. Between requests, so that a connection keeps what typical requests need, not what its
  // largest one did; with 0 once an event stream's client has its head, when nothing of its
  // request is needed again.
  void release_large(std::size_t keep);
};

// Forwards one request and writes the response. Returns whether the client connection may
// carry another request. `snapshot` is the configuration the request routes with, from its
// start to its end; `caller` is who sent it (its subjects for the rules, its budgets).
// `streamed`: the body is not in `req` but still to be read from the client and streamed to
// the one backend chosen (a large upload: net/streamed_body.hpp); null when it is buffered.
Task<bool> forward_request(Worker& w, const Snapshot& snapshot, io::TimedSocket& client,
                           http1::RequestHead& req, const http::RequestTarget& target,
                           const clients::ClientIdentity& caller, telemetry::RequestRecord& rec,
                           ForwardBuffers& buffers, StreamedBody* streamed = nullptr);

}  // namespace smartlb::net
