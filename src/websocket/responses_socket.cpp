// Messages of the Responses API's WebSocket mode (include/smartlb/websocket/responses_socket.hpp).
#include "smartlb/websocket/responses_socket.hpp"

#include <nlohmann/json.hpp>

#include "smartlb/http/request_body.hpp"
#include "smartlb/stateful/id_tagger.hpp"
#include "smartlb/stateful/request_ids.hpp"

namespace smartlb::websocket {
namespace {

std::string_view param_of(stateful::PinRank rank) {
  switch (rank) {
    case stateful::PinRank::PreviousResponse:
      return "previous_response_id";
    case stateful::PinRank::Conversation:
      return "conversation";
    default:
      return {};
  }
}

// The message's `stream_id` (a string), for the error that answers it; empty when it has none.
std::string stream_id_of(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return {};
  const auto it = j.find("stream_id");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Edit ServerEventEditor::edit(std::string_view text, std::string& out) {
  if (auto u = response_completed_usage(text))
    found.push_back({false, std::move(*u)});
  else if (is_response_created(text))
    found.push_back({true, {}});
  else if (is_response_end(text))
    found.push_back({false, {}, true});
  // Not JSON, or nothing in it to tag: the frame goes as it came.
  if (!stateful::tag_json_ids(text, tag_, out) || out.size() == text.size()) return Edit::Keep;
  return Edit::Replace;
}

Edit ClientRequestEditor::edit(std::string_view text, std::string& out) {
  if (reads_model_)
    if (const auto named = http::read_request_body("/v1/responses", text).model) model.assign(*named);
  if (!stateful::may_hold_tag(text)) return Edit::Keep;
  stateful::RequestIds ids;
  if (!stateful::strip_json_body(text, out, ids) || ids.tagged().empty()) return Edit::Keep;
  ids.order();
  for (const stateful::FoundId& found : ids.tagged()) {
    if (found.bits == own_ || !configured_(found.bits)) continue;
    // The id as the client wrote it: the view into `text`, then its tag.
    std::string id(found.id);
    id.append(stateful::tag_from_bits(found.bits).view());
    refusals.push_back(foreign_id_error(id, param_of(found.rank), stream_id_of(text)));
    return Edit::Drop;
  }
  return Edit::Replace;
}

std::string foreign_id_error(std::string_view id, std::string_view param, std::string_view stream_id) {
  nlohmann::json error = {
      {"type", "invalid_request_error"},
      {"code", "resource_conflict"},
      {"message", "The id '" + std::string(id) +
                      "' was made on another resource than the one this WebSocket is connected to, "
                      "and smartlb keeps a WebSocket on one resource. Use it over HTTP "
                      "(POST /v1/responses), where it goes to its resource."},
      {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
  };
  nlohmann::json event = {{"type", "error"}, {"status", 400}, {"error", std::move(error)}};
  if (!stream_id.empty()) event["stream_id"] = stream_id;
  return event.dump();
}

}  // namespace smartlb::websocket
