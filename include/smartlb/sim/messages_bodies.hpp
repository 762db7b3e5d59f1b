#pragma once
// Anthropic-shaped bodies of the Messages API: a message, the server-sent events of a streamed
// one (message_start, content_block_start, ping, one content_block_delta per generated piece,
// content_block_stop, message_delta, message_stop), count_tokens' answer and the error shape
// {"type":"error","error":{"type","message"}}. The same text as the OpenAI routes. Pure.

#include "smartlb/sim/response_bodies.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb::sim {

struct MessageSpec {
  std::string id;  // msg_...
  std::string model;
  std::int64_t input_tokens = 1;
  int output_tokens = 1;  // = generated pieces, one per content_block_delta
};

/// {"id","type":"message","role":"assistant","model","content":[{"type":"text","text"}],
///  "stop_reason":"end_turn","stop_sequence":null,"usage":{...}}
std::string message_body(const MessageSpec& spec);

/// The events of streaming `spec`, each a whole SSE event with its `event:` line; the deltas
/// are marked is_content (paced like the other streams).
std::vector<StreamEvent> message_stream_events(const MessageSpec& spec);

/// {"input_tokens": N}
std::string count_tokens_body(std::int64_t input_tokens);

/// {"type":"error","error":{"type":type,"message":message}}
std::string anthropic_error_body(std::string_view type, std::string_view message);

/// The error type Anthropic gives a status: invalid_request_error (400 and other 4xx),
/// authentication_error (401), permission_error (403), not_found_error (404),
/// request_too_large (413), rate_limit_error (429), overloaded_error (529), api_error (5xx).
std::string_view anthropic_error_type(int status);

}  // namespace smartlb::sim
