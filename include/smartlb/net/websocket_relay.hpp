#pragma once
// A WebSocket session after the backend's verified 101 (docs/stateful-apis.md, Realtime): the
// client's 101, then a frame-aware byte relay both ways. Bytes go on as they arrive, as they are
// (never unmasked, re-masked or gathered into messages): one bounded buffer per direction, the
// next read only once the last write is done. Frame headers are read as the bytes pass
// (websocket/frame_parser) to count frames, to put a close between two frames when the session
// is closed by smartlb (idle, too long, a drain), and to read the usage of the backend's small
// unfragmented `response.done` text frames.
//
// The Responses API's WebSocket mode is the exception: its small unfragmented text messages
// are held whole and edited (websocket/responses_socket): ids tagged in the backend's events,
// untagged in the client's requests, and a request naming another resource's id answered with
// an `error` event instead of forwarded.
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/upstream.hpp"
#include "smartlb/stateful/resource_tag.hpp"
#include "smartlb/telemetry/request_record.hpp"
#include "smartlb/websocket/realtime_usage.hpp"

namespace smartlb::net {

struct Worker;

// Told as each response of a session ends (a `response.done` with its usage), so that routing
// learns from a session while it lasts, not once at its end (it may last an hour).
class SessionResponses {
 public:
  // `took`: since its `response.created`, when the relay saw one. `asked_model`: what the
  // client's last `response.create` named (a Responses socket; empty when none did).
  virtual void response_done(const websocket::RealtimeUsage& usage, std::optional<Nanos> took,
                             std::string_view asked_model) = 0;

 protected:
  ~SessionResponses() = default;
};

struct WebSocketSession {
  std::string_view client_key;    // the client's Sec-WebSocket-Key, which its 101 answers
  std::string_view backend_name;  // x-smartlb-backend
  std::string_view request_id;
  // A Responses socket: the serving backend's resource's tag (null: a Realtime session, relayed
  // unedited), and whether a tag's bits name a configured resource.
  const stateful::ResourceTag* responses_tag = nullptr;
  std::function<bool(std::uint64_t)> configured_tag;
  bool reads_model = false;  // the handshake named no model: each response.create's is read
  SessionResponses* responses = nullptr;
};

// Writes the client's 101 (the backend's fields but those of the handshake itself, which are
// smartlb's to answer), then relays until both sides are done. What the session used (its
// response.done usage, summed) goes into `rec`, with status 101; each response is told to
// `session.responses` as it ends.
Task<void> relay_websocket(Worker& w, TimedSocket& client, UpstreamPtr upstream,
                           const WebSocketSession& session, RequestRecord& rec);

}  // namespace smartlb::net
