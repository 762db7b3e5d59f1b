#pragma once
// How many tokens a request will count against a TPM quota, estimated the way Azure OpenAI's
// rate limiter does before the model runs: prompt characters / 4 plus the completion budget
// (max_tokens). Used only for backends with a declared TPM, a low report or a token budget.
#include <cstdint>
#include <string_view>

#include "smartlb/http/request_body.hpp"

namespace smartlb::routing {

// The completion budget counted when a request names none.
inline constexpr std::int64_t kDefaultMaxTokensEstimate = 16;

// From what was read of the body (http/request_body): the operation (chat/completions,
// completions, embeddings, responses) says what the prompt is; a body that is not a JSON object
// costs its size / 4 plus the default completion budget.
std::int64_t estimate_request_tokens(const http::RequestBodyFacts& body);

// The same estimate in its two parts: the prompt, and the completion budget (what a cost budget
// prices at the input and the output price). prompt + completion is estimate_request_tokens.
struct TokenEstimate {
  std::int64_t prompt = 0, completion = 0;
};
TokenEstimate estimate_request_token_parts(const http::RequestBodyFacts& body);

// The same, reading `body` of a request to `path` first.
std::int64_t estimate_request_tokens(std::string_view path, std::string_view body);

}  // namespace smartlb::routing
