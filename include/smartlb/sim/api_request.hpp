#pragma once
// The parts of an OpenAI request body the simulator cares about, and its quota cost.

#include "smartlb/sim/route.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

inline constexpr std::int64_t kDefaultMaxTokens = 16;

struct ApiRequest {
  Operation operation = Operation::ChatCompletions;
  std::string model;               // body "model", empty when absent
  bool stream = false;             // "stream": true (ignored for embeddings)
  bool include_usage = false;      // "stream_options": {"include_usage": true}
  std::int64_t max_tokens = 0;     // "max_tokens" / "max_completion_tokens" or the default; 0 for embeddings
  std::int64_t prompt_tokens = 1;  // estimated, see token_estimate.hpp
  std::int64_t input_count = 1;    // embeddings: number of inputs
  bool base64_embeddings = false;  // embeddings: "encoding_format": "base64"

  /// Quota cost: prompt tokens + max_tokens (embeddings: prompt tokens only).
  std::int64_t cost() const { return prompt_tokens + max_tokens; }
};

struct ApiRequestParse {
  std::optional<ApiRequest> request;
  std::string error;  // set when request is empty: a message for a 400
};

ApiRequestParse parse_api_request(Operation operation, std::string_view body,
                                  std::int64_t default_max_tokens = kDefaultMaxTokens);

}  // namespace smartlb::sim
