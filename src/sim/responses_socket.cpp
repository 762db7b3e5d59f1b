#include "smartlb/sim/responses_socket.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

#include "smartlb/sim/error_bodies.hpp"

namespace smartlb::sim {
namespace {

using nlohmann::ordered_json;

std::string error_event(int status, ordered_json error, const ordered_json& stream_id) {
  ordered_json event = {{"type", "error"}, {"status", status}, {"error", std::move(error)}};
  if (!stream_id.is_null()) event["stream_id"] = stream_id;
  return event.dump();
}

bool is_credential(std::string_view name) {
  const auto lower_equals = [name](std::string_view word) {
    if (name.size() != word.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(name[i])) != word[i]) return false;
    return true;
  };
  return lower_equals("api-key") || lower_equals("authorization");
}

// The JSON of an SSE event's `data:` line (the sim writes one per event).
std::string_view data_of(std::string_view event) {
  constexpr std::string_view kData = "data: ";
  const auto at = event.find(kData);
  if (at == std::string_view::npos) return {};
  event.remove_prefix(at + kData.size());
  return event.substr(0, event.find('\n'));
}

}  // namespace

std::vector<std::string> responses_socket_turn(SimEngine& engine, const SimRequest& handshake,
                                               std::string_view message) {
  ordered_json body = ordered_json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || body.value("type", "") != "response.create") {
    return {error_event(
        400,
        ordered_json::parse(openai_error_body("invalid_request_error",
                                              "Expected a JSON message of type 'response.create'."))["error"],
        nullptr)};
  }
  ordered_json stream_id = nullptr;
  if (const auto it = body.find("stream_id"); it != body.end()) {
    stream_id = *it;
    body.erase(it);
  }
  body.erase("type");
  body["stream"] = true;  // the socket's events are the stream's

  SimRequest post;
  post.method = "POST";
  post.target = handshake.target;
  for (const auto& [name, value] : handshake.headers) {
    if (is_credential(name)) post.headers.emplace_back(name, value);
  }
  post.body = body.dump();
  const SimResponse answer = engine.handle(post);
  if (answer.status != 200 || !answer.stream) {
    const ordered_json parsed = ordered_json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
    return {
        error_event(answer.status,
                    parsed.is_object() && parsed.contains("error") ? parsed["error"] : ordered_json::object(),
                    stream_id)};
  }
  std::vector<std::string> messages;
  for (const StreamEvent& event : answer.events) {
    ordered_json json = ordered_json::parse(data_of(event.data), nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) continue;
    if (!stream_id.is_null()) json["stream_id"] = stream_id;
    messages.push_back(json.dump());
  }
  return messages;
}

}  // namespace smartlb::sim
