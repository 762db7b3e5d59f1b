#include "smartlb/sim/realtime_session.hpp"

#include "smartlb/sim/response_bodies.hpp"
#include "smartlb/sim/responses_request.hpp"
#include "smartlb/sim/token_estimate.hpp"

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::int64_t kSessionSeconds = 30 * 60;

}  // namespace

RealtimeSession::RealtimeSession(std::string model, GenerationSettings generation, std::uint64_t id_seed,
                                 std::int64_t now_unix)
    : generation_(generation), ids_(id_seed) {
  session_ = {{"type", "realtime"},
              {"object", "realtime.session"},
              {"id", ids_.next("sess_", 24)},
              {"model", std::move(model)},
              {"output_modalities", ordered_json::array({"text"})},
              {"instructions", ""},
              {"tools", ordered_json::array()},
              {"tool_choice", "auto"},
              {"max_output_tokens", "inf"},
              {"expires_at", now_unix + kSessionSeconds}};
}

RealtimeMessage RealtimeSession::event(std::string_view type, ordered_json fields, bool is_content) {
  ordered_json data{{"type", type}, {"event_id", ids_.next("event_", 24)}};
  data.update(fields);
  return {data.dump(), is_content};
}

RealtimeMessage RealtimeSession::opening() { return event("session.created", {{"session", session_}}); }

RealtimeReply RealtimeSession::error(std::string_view code, std::string message,
                                     const ordered_json& client_event_id) {
  RealtimeReply reply;
  reply.messages.push_back(event("error", {{"error",
                                            {{"type", "invalid_request_error"},
                                             {"code", code},
                                             {"message", std::move(message)},
                                             {"param", nullptr},
                                             {"event_id", client_event_id}}}}));
  return reply;
}

RealtimeReply RealtimeSession::on_binary() {
  return error("invalid_frame", "Binary frames are not part of the Realtime protocol: send JSON text events.",
               nullptr);
}

RealtimeReply RealtimeSession::on_text(std::string_view frame) {
  const auto client_event = ordered_json::parse(frame, nullptr, /*allow_exceptions=*/false);
  if (client_event.is_discarded() || !client_event.is_object()) {
    return error("invalid_json", "The event could not be parsed as a JSON object.", nullptr);
  }
  const ordered_json client_event_id = client_event.value("event_id", ordered_json(nullptr));
  const auto type = client_event.find("type");
  if (type == client_event.end() || !type->is_string()) {
    return error("missing_required_parameter", "Missing required parameter: 'type'.", client_event_id);
  }
  if (*type == "session.update") return update_session(client_event);
  if (*type == "conversation.item.create") return create_item(client_event);
  if (*type == "response.create") return create_response(client_event);
  return error("invalid_value",
               "Invalid value: '" + type->get<std::string>() +
                   "'. smartlb-sim answers session.update, conversation.item.create and response.create.",
               client_event_id);
}

RealtimeReply RealtimeSession::update_session(const ordered_json& client_event) {
  const auto session = client_event.find("session");
  if (session == client_event.end() || !session->is_object()) {
    return error("missing_required_parameter", "Missing required parameter: 'session'.",
                 client_event.value("event_id", ordered_json(nullptr)));
  }
  for (const auto& [key, value] : session->items()) {
    if (key == "id" || key == "object" || key == "model") continue;  // fixed for the session
    session_[key] = value;
  }
  RealtimeReply reply;
  reply.messages.push_back(event("session.updated", {{"session", session_}}));
  return reply;
}

RealtimeReply RealtimeSession::create_item(const ordered_json& client_event) {
  const auto found = client_event.find("item");
  if (found == client_event.end() || !found->is_object()) {
    return error("missing_required_parameter", "Missing required parameter: 'item'.",
                 client_event.value("event_id", ordered_json(nullptr)));
  }
  ordered_json item = *found;
  if (!item.contains("id")) item["id"] = ids_.next("item_", 24);
  if (!item.contains("object")) item["object"] = "realtime.item";
  if (!item.contains("status")) item["status"] = "completed";
  context_tokens_ += tokens_from_characters(input_text_bytes(ordered_json::array({item})));
  const ordered_json previous =
      client_event.contains("previous_item_id") ? client_event["previous_item_id"] : last_item_id_;
  last_item_id_ = item["id"];
  RealtimeReply reply;
  reply.messages.push_back(
      event("conversation.item.created", {{"previous_item_id", previous}, {"item", item}}));
  return reply;
}

RealtimeReply RealtimeSession::create_response(const ordered_json& client_event) {
  const ordered_json options = client_event.value("response", ordered_json::object());
  std::int64_t max_output_tokens = generation_.default_max_tokens;
  const auto limit = options.is_object() ? options.find("max_output_tokens") : options.end();
  if (limit != options.end() && limit->is_number_integer() && limit->get<std::int64_t>() > 0) {
    max_output_tokens = limit->get<std::int64_t>();
  }
  const int pieces = content_chunk_count(generation_.stream_chunks, max_output_tokens);
  const std::int64_t input_tokens = std::max<std::int64_t>(context_tokens_, 1);
  const ordered_json metadata =
      options.is_object() ? options.value("metadata", ordered_json(nullptr)) : ordered_json(nullptr);

  const std::string response_id = ids_.next("resp_", 24);
  const std::string item_id = ids_.next("item_", 24);
  const auto response_object = [&](std::string_view status, ordered_json output, ordered_json usage) {
    return ordered_json{
        {"object", "realtime.response"},
        {"id", response_id},
        {"status", status},
        {"status_details", nullptr},
        {"output", std::move(output)},
        {"conversation_id", session_["id"]},
        {"output_modalities", session_.value("output_modalities", ordered_json::array({"text"}))},
        {"max_output_tokens", max_output_tokens},
        {"metadata", metadata},
        {"usage", std::move(usage)}};
  };
  const auto assistant_item = [&](std::string_view status, ordered_json content) {
    return ordered_json{{"id", item_id},    {"object", "realtime.item"}, {"type", "message"},
                        {"status", status}, {"role", "assistant"},       {"content", std::move(content)}};
  };
  const auto part_fields = [&](ordered_json extra) {
    ordered_json fields{
        {"response_id", response_id}, {"item_id", item_id}, {"output_index", 0}, {"content_index", 0}};
    fields.update(extra);
    return fields;
  };
  const std::string text = generated_text(pieces);
  const ordered_json done_content = ordered_json::array({{{"type", "output_text"}, {"text", text}}});
  const ordered_json usage{
      {"total_tokens", input_tokens + pieces},
      {"input_tokens", input_tokens},
      {"output_tokens", pieces},
      {"input_token_details", {{"text_tokens", input_tokens}, {"audio_tokens", 0}, {"cached_tokens", 0}}},
      {"output_token_details", {{"text_tokens", pieces}, {"audio_tokens", 0}}}};

  RealtimeReply reply;
  auto& out = reply.messages;
  out.push_back(event("response.created",
                      {{"response", response_object("in_progress", ordered_json::array(), nullptr)}}));
  out.push_back(
      event("response.output_item.added", {{"response_id", response_id},
                                           {"output_index", 0},
                                           {"item", assistant_item("in_progress", ordered_json::array())}}));
  out.push_back(
      event("response.content_part.added", part_fields({{"part", {{"type", "text"}, {"text", ""}}}})));
  for (int i = 0; i < pieces; ++i) {
    out.push_back(event("response.output_text.delta", part_fields({{"delta", generated_piece(i)}}), true));
  }
  out.push_back(event("response.output_text.done", part_fields({{"text", text}})));
  out.push_back(
      event("response.content_part.done", part_fields({{"part", {{"type", "text"}, {"text", text}}}})));
  out.push_back(event("response.output_item.done", {{"response_id", response_id},
                                                    {"output_index", 0},
                                                    {"item", assistant_item("completed", done_content)}}));
  out.push_back(
      event("response.done",
            {{"response",
              response_object("completed", ordered_json::array({assistant_item("completed", done_content)}),
                              usage)}}));
  reply.tokens_served = input_tokens + pieces;
  context_tokens_ += pieces;
  last_item_id_ = item_id;
  return reply;
}

}  // namespace smartlb::sim
