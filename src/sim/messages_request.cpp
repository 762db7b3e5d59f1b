#include "smartlb/sim/messages_request.hpp"

#include "smartlb/sim/token_estimate.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

MessagesRequestParse messages_failure(std::string message) {
  MessagesRequestParse parse;
  parse.error = std::move(message);
  return parse;
}

}  // namespace

MessagesRequestParse parse_messages_request(std::string_view body, bool count_tokens) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return messages_failure("The request body is not valid JSON.");

  MessagesRequest request;
  const auto model = json.find("model");
  if (model == json.end() || model->is_null()) return messages_failure("model: Field required");
  if (!model->is_string()) return messages_failure("model: Input should be a valid string");
  request.model = model->get<std::string>();

  const auto messages = json.find("messages");
  if (messages == json.end() || messages->is_null()) return messages_failure("messages: Field required");
  if (!messages->is_array()) return messages_failure("messages: Input should be a valid list");

  if (!count_tokens) {
    const auto max_tokens = json.find("max_tokens");
    if (max_tokens == json.end() || max_tokens->is_null())
      return messages_failure("max_tokens: Field required");
    if (!max_tokens->is_number_integer())
      return messages_failure("max_tokens: Input should be a valid integer");
    if (max_tokens->get<std::int64_t>() < 1)
      return messages_failure("max_tokens: Input should be greater than or equal to 1");
    request.max_tokens = max_tokens->get<std::int64_t>();

    if (const auto stream = json.find("stream"); stream != json.end() && !stream->is_null()) {
      if (!stream->is_boolean()) return messages_failure("stream: Input should be a valid boolean");
      request.stream = stream->get<bool>();
    }
  }

  request.input_tokens = tokens_from_characters(messages_prompt_characters(json));
  MessagesRequestParse parse;
  parse.request = std::move(request);
  return parse;
}

}  // namespace smartlb::sim
