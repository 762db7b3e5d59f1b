#pragma once
// The body of POST /responses (the Responses API): what the simulator reads from it, checked
// the way OpenAI checks it, and its input normalised into items (a string input becomes one
// user message with an input_text part). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

struct ResponsesCreate {
  std::string model;
  /// Input items without ids: messages as {"type":"message","role","content":[parts]}, any
  /// other item as given.
  nlohmann::ordered_json input_items = nlohmann::ordered_json::array();
  std::optional<std::string> previous_response_id;
  nlohmann::ordered_json instructions = nullptr;  // string or null, echoed
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  std::optional<std::int64_t> max_output_tokens;
  double temperature = 1.0;
  double top_p = 1.0;
  bool stream = false;
  bool background = false;
  bool store = true;
  /// Estimated tokens of this request's own text (input and instructions): max(1, bytes / 4).
  std::int64_t prompt_tokens = 1;
};

/// A refused body: OpenAI's message, the parameter at fault and the error code.
struct RequestError {
  std::string message;
  std::optional<std::string> param;
  std::optional<std::string> code;
};

struct ResponsesCreateParse {
  std::optional<ResponsesCreate> request;
  RequestError error;  // when request is empty
};

ResponsesCreateParse parse_responses_create(std::string_view body);

/// Bytes of text in input items: each content part's "text", a message's string content, a
/// tool output's "output".
std::size_t input_text_bytes(const nlohmann::ordered_json& items);

}  // namespace smartlb::sim
