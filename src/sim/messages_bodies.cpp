#include "smartlb/sim/messages_bodies.hpp"

#include "smartlb/sim/response_objects.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json messages_usage_json(std::int64_t input_tokens, std::int64_t output_tokens) {
  return {{"input_tokens", input_tokens},
          {"output_tokens", output_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", 0}};
}

// The message object; `content`, `stop_reason` and `usage` differ between a whole message and
// the start of a stream.
ordered_json message_json(const MessageSpec& spec, ordered_json content, ordered_json stop_reason,
                          ordered_json usage) {
  return {{"id", spec.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", spec.model},
          {"content", std::move(content)},
          {"stop_reason", std::move(stop_reason)},
          {"stop_sequence", nullptr},
          {"usage", std::move(usage)}};
}

}  // namespace

std::string message_body(const MessageSpec& spec) {
  const ordered_json text_block{{"type", "text"}, {"text", generated_text(spec.output_tokens)}};
  return message_json(spec, ordered_json::array({text_block}), "end_turn",
                      messages_usage_json(spec.input_tokens, spec.output_tokens))
      .dump();
}

std::vector<StreamEvent> message_stream_events(const MessageSpec& spec) {
  std::vector<StreamEvent> events;
  events.reserve(static_cast<std::size_t>(spec.output_tokens) + 6);
  const auto add = [&](std::string_view type, ordered_json data, bool is_content = false) {
    events.push_back({named_sse_event(type, data), is_content});
  };
  // Like the API, message_start reports the first output token already.
  add("message_start", {{"type", "message_start"},
                        {"message", message_json(spec, ordered_json::array(), nullptr,
                                                 messages_usage_json(spec.input_tokens, 1))}});
  add("content_block_start",
      {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}});
  add("ping", {{"type", "ping"}});
  for (int i = 0; i < spec.output_tokens; ++i) {
    add("content_block_delta",
        {{"type", "content_block_delta"},
         {"index", 0},
         {"delta", {{"type", "text_delta"}, {"text", generated_piece(i)}}}},
        true);
  }
  add("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
  add("message_delta", {{"type", "message_delta"},
                        {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                        {"usage", {{"output_tokens", spec.output_tokens}}}});
  add("message_stop", {{"type", "message_stop"}});
  return events;
}

std::string count_tokens_body(std::int64_t input_tokens) {
  return ordered_json{{"input_tokens", input_tokens}}.dump();
}

std::string anthropic_error_body(std::string_view type, std::string_view message) {
  return ordered_json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump();
}

std::string_view anthropic_error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

}  // namespace smartlb::sim
