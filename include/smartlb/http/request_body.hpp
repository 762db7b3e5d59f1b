#pragma once
// What the request path needs from an API request's JSON body, read in one pass: the model it
// names, the affinity keys, and what the token estimate counts (routing/token_estimate). The
// forwarder reads a body at most once, and only when something needs it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace smartlb::http {

// The operation a request path names, by its ending.
enum class ApiOperation : std::uint8_t {
  ChatCompletions,  // .../chat/completions: the prompt is `messages`
  Completions,      // .../completions: `prompt`
  Embeddings,       // .../embeddings: `input`
  Responses,        // .../responses: `input`
  Messages,         // Claude's .../messages (and .../messages/count_tokens): `system`, `messages`, `tools`
  Other,
};

ApiOperation api_operation(std::string_view path);

struct RequestBodyFacts {
  ApiOperation operation = ApiOperation::Other;
  std::size_t body_size = 0;
  // A valid JSON object (http/json_lexer.hpp). When false, nothing below was read.
  bool json_object = false;
  // Top-level string members: the raw text between the quotes (escapes as written), a view
  // into the body; with duplicates the last one counts. nullopt: absent, or not a string.
  std::optional<std::string_view> model, prompt_cache_key, user;
  // The operation's prompt as Azure's limiter measures it: the bytes (once unescaped) of every
  // string in its top-level prompt member, inside arrays and the `text` / `content` members of
  // objects there, and 4 for each integer there (a token id). Every duplicate of the member counts.
  std::size_t prompt_characters = 0;
  // The first positive integer of each top-level completion budget, saturated at INT64_MAX;
  // 0 when there is none.
  std::int64_t max_tokens = 0, max_completion_tokens = 0, max_output_tokens = 0;
  // `"stream": true`: the answer is an event stream, whose first token can be waited for.
  bool stream = false;
  // How hard a reasoning model is asked to think: the top-level `reasoning_effort` (Chat
  // Completions) or `reasoning.effort` (Responses), raw; "thinking" for a Messages request with
  // extended thinking (a `thinking` object); nullopt: not said.
  std::optional<std::string_view> reasoning_effort;
};

// Reads `body` of a request to `path`. Keys are matched by what they mean (`"mod\u0065l"` is
// `model`); a number counts as an integer when nlohmann::json would read it as one (no fraction
// or exponent, within int64 when negative and uint64 otherwise).
RequestBodyFacts read_request_body(std::string_view path, std::string_view body);

}  // namespace smartlb::http
