#pragma once
// The body of a request to Anthropic's Messages API (POST /v1/messages and
// /v1/messages/count_tokens): what the simulator reads from it, checked the way the API checks
// it, and its quota cost. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

struct MessagesRequest {
  std::string model;              // the deployment
  bool stream = false;            // "stream": true
  std::int64_t max_tokens = 0;    // required by a create; 0 for count_tokens
  std::int64_t input_tokens = 1;  // estimated, see messages_prompt_characters

  /// Quota cost, as for chat: input tokens + max_tokens.
  std::int64_t cost() const { return input_tokens + max_tokens; }
};

struct MessagesRequestParse {
  std::optional<MessagesRequest> request;
  std::string error;  // set when request is empty: the message of a 400 invalid_request_error
};

/// `count_tokens`: the body of .../messages/count_tokens (no max_tokens, no stream).
MessagesRequestParse parse_messages_request(std::string_view body, bool count_tokens);

}  // namespace smartlb::sim
