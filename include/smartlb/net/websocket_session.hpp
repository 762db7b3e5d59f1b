#pragma once
// What a relayed WebSocket session (net/websocket_relay) is told by the policy that opened it,
// and what it tells back as each of its responses ends.
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/stateful/resource_tag.hpp"
#include "smartlb/websocket/realtime_usage.hpp"

namespace smartlb::net {

// Told as each response of a session ends (a `response.done` with its usage), so that routing
// learns from a session while it lasts, not once at its end (it may last an hour).
class SessionResponses {
 public:
  // A response began (its `response.created`): the caller has a request in flight again; and
  // ended, whatever it carried (after response_done when it told its usage).
  virtual void response_started() {}
  virtual void response_ended() {}
  // `took`: since its `response.created`, when the relay saw one. `asked_model`: what the
  // client's last `response.create` named (a Responses socket; empty when none did).
  virtual void response_done(const websocket::RealtimeUsage& usage, std::optional<base::Nanos> took,
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

}  // namespace smartlb::net
