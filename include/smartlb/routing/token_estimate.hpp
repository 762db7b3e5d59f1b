#pragma once
// How many tokens a request will count against a TPM quota, estimated the way Azure OpenAI's
// rate limiter does before the model runs: prompt characters / 4 plus the completion budget
// (max_tokens). Used only for backends with a declared TPM.
#include <cstdint>
#include <string_view>

namespace smartlb {

// The completion budget counted when a request names none.
inline constexpr std::int64_t kDefaultMaxTokensEstimate = 16;

// `path` selects the operation (chat/completions, completions, embeddings, responses);
// an unparseable body costs its size / 4 plus the default completion budget.
std::int64_t estimate_request_tokens(std::string_view path, std::string_view body);

}  // namespace smartlb
