#include "smartlb/sim/response_objects.hpp"

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json output_text_part(const std::string& text) {
  return {{"type", "output_text"},
          {"annotations", ordered_json::array()},
          {"logprobs", ordered_json::array()},
          {"text", text}};
}

ordered_json output_message(const StoredResponse& response, std::string_view status, ordered_json content) {
  return {{"id", response.message_id},
          {"type", "message"},
          {"status", status},
          {"content", std::move(content)},
          {"role", "assistant"}};
}

ordered_json usage_object(const StoredResponse& response) {
  return {{"input_tokens", response.input_tokens},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", response.output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", response.input_tokens + response.output_tokens}};
}

ordered_json response_object_with(const StoredResponse& response, ResponseStatus status) {
  const bool completed = status == ResponseStatus::Completed;
  ordered_json output = ordered_json::array();
  if (completed) {
    output.push_back(
        output_message(response, "completed",
                       ordered_json::array({output_text_part(generated_text(response.output_tokens))})));
  }
  return {
      {"id", response.id},
      {"object", "response"},
      {"created_at", response.created_at},
      {"status", response_status_name(status)},
      {"background", response.background},
      {"error", nullptr},
      {"incomplete_details", nullptr},
      {"instructions", response.instructions},
      {"max_output_tokens",
       response.max_output_tokens ? ordered_json(*response.max_output_tokens) : ordered_json(nullptr)},
      {"model", response.model},
      {"output", std::move(output)},
      {"parallel_tool_calls", true},
      {"previous_response_id",
       response.previous_response_id ? ordered_json(*response.previous_response_id) : ordered_json(nullptr)},
      {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
      {"store", response.store},
      {"temperature", response.temperature},
      {"text", {{"format", {{"type", "text"}}}}},
      {"tool_choice", "auto"},
      {"tools", ordered_json::array()},
      {"top_p", response.top_p},
      {"truncation", "disabled"},
      {"usage", completed ? usage_object(response) : ordered_json(nullptr)},
      {"user", nullptr},
      {"metadata", response.metadata}};
}

}  // namespace

std::string_view response_status_name(ResponseStatus status) {
  switch (status) {
    case ResponseStatus::Queued:
      return "queued";
    case ResponseStatus::InProgress:
      return "in_progress";
    case ResponseStatus::Completed:
      return "completed";
    case ResponseStatus::Cancelled:
      return "cancelled";
  }
  return "unknown";
}

ordered_json response_object(const StoredResponse& response) {
  return response_object_with(response, response.status);
}

std::string named_sse_event(std::string_view type, const ordered_json& data) {
  std::string event = "event: ";
  event += type;
  event += "\ndata: ";
  event += data.dump();
  event += "\n\n";
  return event;
}

std::vector<StreamEvent> response_stream_events(const StoredResponse& response, std::int64_t starting_after) {
  std::vector<StreamEvent> events;
  events.reserve(static_cast<std::size_t>(response.output_tokens) + 8);
  std::int64_t sequence = 0;
  const auto add = [&](std::string_view type, ordered_json fields, bool is_content = false) {
    ordered_json data{{"type", type}, {"sequence_number", sequence}};
    data.update(fields);
    if (sequence > starting_after) events.push_back({named_sse_event(type, data), is_content});
    ++sequence;
  };
  const auto part_fields = [&](ordered_json extra) {
    ordered_json fields{{"item_id", response.message_id}, {"output_index", 0}, {"content_index", 0}};
    fields.update(extra);
    return fields;
  };

  const ordered_json running = response_object_with(response, ResponseStatus::InProgress);
  add("response.created", {{"response", running}});
  add("response.in_progress", {{"response", running}});
  add("response.output_item.added",
      {{"output_index", 0}, {"item", output_message(response, "in_progress", ordered_json::array())}});
  add("response.content_part.added", part_fields({{"part", output_text_part("")}}));
  for (int i = 0; i < response.output_tokens; ++i) {
    add("response.output_text.delta",
        part_fields({{"delta", generated_piece(i)}, {"logprobs", ordered_json::array()}}), true);
  }
  const std::string text = generated_text(response.output_tokens);
  add("response.output_text.done", part_fields({{"text", text}, {"logprobs", ordered_json::array()}}));
  add("response.content_part.done", part_fields({{"part", output_text_part(text)}}));
  add("response.output_item.done",
      {{"output_index", 0},
       {"item", output_message(response, "completed", ordered_json::array({output_text_part(text)}))}});
  add("response.completed", {{"response", response_object_with(response, ResponseStatus::Completed)}});
  return events;
}

}  // namespace smartlb::sim
