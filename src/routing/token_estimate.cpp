#include "smartlb/routing/token_estimate.hpp"

#include <algorithm>

namespace smartlb::routing {

std::int64_t estimate_request_tokens(const http::RequestBodyFacts& body) {
  const TokenEstimate e = estimate_request_token_parts(body);
  // Saturating: a budget near INT64_MAX must not wrap the cost negative (which would free quota).
  return e.completion > INT64_MAX - e.prompt ? INT64_MAX : e.prompt + e.completion;
}

TokenEstimate estimate_request_token_parts(const http::RequestBodyFacts& body) {
  if (!body.json_object)
    return {static_cast<std::int64_t>((body.body_size + 3) / 4), kDefaultMaxTokensEstimate};
  // An operation without a known prompt counts the whole body.
  const std::size_t chars =
      body.operation == http::ApiOperation::Other ? body.body_size : body.prompt_characters;
  // Rounded up and at least one: never below the backend's own (rounded-down) estimate.
  const std::int64_t prompt = std::max<std::int64_t>(static_cast<std::int64_t>((chars + 3) / 4), 1);
  std::int64_t budget = kDefaultMaxTokensEstimate;
  for (const std::int64_t b : {body.max_tokens, body.max_completion_tokens, body.max_output_tokens})
    if (b > 0) {
      budget = b;
      break;
    }
  // Embeddings produce no completion tokens.
  return {prompt, body.operation == http::ApiOperation::Embeddings ? 0 : budget};
}

std::int64_t estimate_request_tokens(std::string_view path, std::string_view body) {
  return estimate_request_tokens(http::read_request_body(path, body));
}

}  // namespace smartlb::routing
