#pragma once
// What a batch does with its input file (JSONL, one request a line:
// {"custom_id","method":"POST","url","body"}): validation of every line, then one output line
// per request, {"id":"batch_req_...","custom_id","response":{"status_code":200,"request_id",
// "body"},"error":null}, with the body the endpoint answers (chat completion, completion,
// embeddings, response). Pure: ids and time are passed in.

#include "smartlb/sim/object_ids.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

/// The endpoint a batch runs, normalised to its /v1 form ("/chat/completions" and
/// "/v1/chat/completions" are the same); nullopt when batches do not run it.
std::optional<std::string> batch_endpoint(std::string_view endpoint);

struct BatchLineError {
  std::string code;  // invalid_json_line, missing_custom_id, invalid_method, mismatched_url, ...
  std::string message;
  std::int64_t line = 0;  // 1-based
};

struct BatchValidation {
  std::int64_t requests = 0;
  std::vector<BatchLineError> errors;  // empty: every line is a valid request
};

/// Checks every non-empty line of `input` against `endpoint` (normalised). At most
/// `max_errors` errors are listed.
BatchValidation validate_batch_input(std::string_view input, std::string_view endpoint,
                                     std::size_t max_errors = 10);

struct BatchGeneration {
  int stream_chunks = 5;
  std::int64_t default_max_tokens = 16;
};

/// The output file of a validated input: one line per request, in input order.
std::string run_batch(std::string_view input, std::string_view endpoint, const BatchGeneration& generation,
                      IdMinter& ids, std::int64_t now_unix);

}  // namespace smartlb::sim
