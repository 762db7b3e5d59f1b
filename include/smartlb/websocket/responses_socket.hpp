#pragma once
// The Responses API's WebSocket mode (docs/stateful-apis.md): the text messages smartlb edits on
// a socket that one backend serves. The backend's events get their ids tagged with its
// resource's tag (stateful/id_tagger), and their `response.completed` usage is read; the
// client's `response.create` loses the tags of the ids it names (stateful/request_ids), and one
// that names an id of another configured resource is not forwarded: the client gets an `error`
// event instead (the socket cannot reach that resource). No I/O.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/stateful/resource_tag.hpp"
#include "smartlb/websocket/frame_rewriter.hpp"
#include "smartlb/websocket/realtime_usage.hpp"

namespace smartlb::websocket {

// Server text messages up to this size are edited (tagged, read for usage); larger ones pass
// untagged. A `response.completed` event repeats the whole response: room for a long answer.
inline constexpr std::size_t kEditedEventBytes = 1024 * 1024;
// A client's `response.create` is small unless its input is: larger ones keep their tags.
inline constexpr std::size_t kEditedRequestBytes = 1024 * 1024;

// A response's start or end, as the relay tells routing (latency, declared quotas).
struct ResponseEvent {
  bool created = false;  // response.created; else response.completed with `usage`, or
  RealtimeUsage usage;
  bool ended = false;  // a response's end without usage (failed, incomplete)
};

class ServerEventEditor final : public TextEditor {
 public:
  explicit ServerEventEditor(const stateful::ResourceTag& tag) : tag_(tag) {}
  Edit edit(std::string_view text, std::string& out) override;
  // Each `response.created` and `response.completed` edited since the last clear, in order.
  std::vector<ResponseEvent> found;

 private:
  stateful::ResourceTag tag_;
};

class ClientRequestEditor final : public TextEditor {
 public:
  // `own`: the socket's resource's tag bits; `configured(bits)`: whether a configured resource
  // has that tag (a tag of none is taken off and the id goes on untagged, as over HTTP).
  // `reads_model`: the handshake named no model, so each message's is read (`model`).
  ClientRequestEditor(std::uint64_t own, std::function<bool(std::uint64_t)> configured,
                      bool reads_model = false)
      : own_(own), configured_(std::move(configured)), reads_model_(reads_model) {}
  Edit edit(std::string_view text, std::string& out) override;
  // The `error` events for the messages dropped since the last clear: each is the payload of
  // one text frame for the client.
  std::vector<std::string> refusals;
  // The model the last edited message named (its JSON text, escapes as written), when
  // `reads_model`: a socket whose handshake named none has each response charged under the model
  // its `response.create` asked for.
  std::string model;

 private:
  std::uint64_t own_;
  std::function<bool(std::uint64_t)> configured_;
  bool reads_model_;
};

// The `error` event that answers a message naming `id` (as the client wrote it, tag included)
// from another resource: `param` is the member that named it ("previous_response_id", ...; empty
// for another place), `stream_id` the message's own (empty: none).
std::string foreign_id_error(std::string_view id, std::string_view param, std::string_view stream_id);

}  // namespace smartlb::websocket
