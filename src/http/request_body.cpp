#include "smartlb/http/request_body.hpp"

#include <array>
#include <cstring>

#include "smartlb/http/json_lexer.hpp"

namespace smartlb::http {
namespace {

// What a top-level member is to the request path.
enum class TopKey : std::uint8_t {
  Other,
  Model,
  PromptCacheKey,
  User,
  Prompt,
  MaxTokens,
  MaxCompletionTokens,
  MaxOutputTokens,
  Stream,
  ReasoningEffort,
  Reasoning,  // an object whose `effort` is read
  Thinking,   // Claude's extended thinking (an object)
  Tools,      // Claude's tool definitions: every string in them counts
};

// The longest name compared ("max_completion_tokens"): a longer key is none of them.
constexpr std::size_t kLongestName = 21;

// Whether `k` is `name`: a comparison of known length (a few instructions, no memcmp call).
template <std::size_t N>
bool is(std::string_view k, const char (&name)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), name, N - 1) == 0;
}

// What the top-level member `raw` names, for a request of operation `op`.
// (The readers below take the token's values, not the lexer: a lexer that no function outside
// the loop sees stays in registers.)
TopKey top_key(std::string_view raw, bool escaped, ApiOperation op) {
  std::array<char, kLongestName> buf;
  const auto decoded = json_short_text(raw, escaped, buf);
  if (!decoded) return TopKey::Other;
  const std::string_view k = *decoded;
  switch (k.size()) {
    case 4:
      return is(k, "user") ? TopKey::User : TopKey::Other;
    case 5:
      if (is(k, "model")) return TopKey::Model;
      if (is(k, "tools") && op == ApiOperation::Messages) return TopKey::Tools;
      return is(k, "input") && (op == ApiOperation::Embeddings || op == ApiOperation::Responses)
                 ? TopKey::Prompt
                 : TopKey::Other;
    case 6:
      if (is(k, "stream")) return TopKey::Stream;
      if (is(k, "system") && op == ApiOperation::Messages) return TopKey::Prompt;
      return is(k, "prompt") && op == ApiOperation::Completions ? TopKey::Prompt : TopKey::Other;
    case 8:
      if (is(k, "thinking")) return TopKey::Thinking;
      return is(k, "messages") && (op == ApiOperation::ChatCompletions || op == ApiOperation::Messages)
                 ? TopKey::Prompt
                 : TopKey::Other;
    case 9:
      return is(k, "reasoning") ? TopKey::Reasoning : TopKey::Other;
    case 10:
      return is(k, "max_tokens") ? TopKey::MaxTokens : TopKey::Other;
    case 16:
      if (is(k, "reasoning_effort")) return TopKey::ReasoningEffort;
      return is(k, "prompt_cache_key") ? TopKey::PromptCacheKey : TopKey::Other;
    case 17:
      return is(k, "max_output_tokens") ? TopKey::MaxOutputTokens : TopKey::Other;
    case 21:
      return is(k, "max_completion_tokens") ? TopKey::MaxCompletionTokens : TopKey::Other;
    default:
      return TopKey::Other;
  }
}

// Inside the prompt, an object's text is in its `text` and `content` members.
bool is_text_member(std::string_view raw, bool escaped, std::size_t decoded_size) {
  if (decoded_size != 4 && decoded_size != 7) return false;
  std::array<char, 7> buf;
  const auto k = json_short_text(raw, escaped, buf);
  return k && (is(*k, "text") || is(*k, "content"));
}

// Whether an integer Number token (no fraction, no exponent) is an integer to nlohmann::json
// (it fits int64 when negative, uint64 otherwise), and its value when it is positive
// (saturated at INT64_MAX; 0 when it is not).
bool integer_value(std::string_view digits, std::int64_t& positive) {
  positive = 0;
  if (digits.front() == '-') {
    digits.remove_prefix(1);
    return digits.size() < 19 || (digits.size() == 19 && digits <= "9223372036854775808");
  }
  if (digits.size() > 20 || (digits.size() == 20 && digits > "18446744073709551615")) return false;
  std::uint64_t v = 0;
  for (const char c : digits) v = v * 10 + static_cast<std::uint64_t>(c - '0');
  positive = v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
  return true;
}

// The value of a top-level member: `t` its first token, `raw` that token's text.
void note_top_level(RequestBodyFacts& f, TopKey which, JsonToken t, std::string_view raw, bool integer) {
  const auto text = t == JsonToken::String ? std::optional(raw) : std::nullopt;
  std::int64_t* budget = nullptr;
  switch (which) {
    case TopKey::Model:
      f.model = text;
      return;
    case TopKey::PromptCacheKey:
      f.prompt_cache_key = text;
      return;
    case TopKey::User:
      f.user = text;
      return;
    case TopKey::Stream:
      f.stream = t == JsonToken::True;
      return;
    case TopKey::ReasoningEffort:
      f.reasoning_effort = text;
      return;
    case TopKey::Thinking:
      if (t == JsonToken::BeginObject) f.reasoning_effort = "thinking";
      return;
    case TopKey::MaxTokens:
      budget = &f.max_tokens;
      break;
    case TopKey::MaxCompletionTokens:
      budget = &f.max_completion_tokens;
      break;
    case TopKey::MaxOutputTokens:
      budget = &f.max_output_tokens;
      break;
    default:
      return;
  }
  std::int64_t v = 0;
  if (t == JsonToken::Number && integer && *budget == 0 && integer_value(raw, v)) *budget = v;
}

// The facts of `body`; false when it is not a valid JSON object.
bool read_object(std::string_view body, RequestBodyFacts& f) {
  JsonLexer lexer(body);
  if (lexer.next() != JsonToken::BeginObject) return false;
  // The prompt's containers are the depths 2 to `counted` (a container is counted only inside a
  // counted one, or as the prompt member's value); 0: none is open.
  std::size_t counted = 0;
  bool after_key = false;    // the next token is a member's value
  bool key_counts = false;   // ... and it counts as prompt text
  bool effort_next = false;  // ... and it is `reasoning.effort`
  TopKey which = TopKey::Other;
  // Forced inline, so the lexer's state and these stay in registers: with a quota, this loop is
  // on the request path.
  return for_each_json_token(
      lexer, [&](JsonToken t) __attribute__((always_inline)) {
        const std::size_t depth = lexer.depth();
        switch (t) {
          case JsonToken::Key:
            after_key = true;
            if (depth == 1) {
              which = top_key(lexer.raw(), lexer.escaped(), f.operation);
              key_counts = which == TopKey::Prompt || which == TopKey::Tools;
            } else {
              key_counts =
                  counted == depth && (which == TopKey::Tools ||
                                       is_text_member(lexer.raw(), lexer.escaped(), lexer.decoded_size()));
              effort_next = depth == 2 && which == TopKey::Reasoning && is(lexer.raw(), "effort");
            }
            return;
          case JsonToken::EndObject:
          case JsonToken::EndArray:
            if (counted == depth + 1) counted = depth >= 2 ? depth : 0;
            return;
          default:
            break;
        }
        // A value: a member's (after its key) or an array element.
        const bool opens = t == JsonToken::BeginObject || t == JsonToken::BeginArray;
        const std::size_t holder = opens ? depth - 1 : depth;
        const bool counts = after_key ? key_counts : holder >= 2 && counted == holder;
        if (counts) {
          std::int64_t unused;
          if (t == JsonToken::String) {
            f.prompt_characters += lexer.decoded_size();
          } else if (t == JsonToken::Number && lexer.integer() && integer_value(lexer.raw(), unused)) {
            f.prompt_characters += 4;
          } else if (opens) {
            counted = depth;
          }
        }
        if (after_key && holder == 1) note_top_level(f, which, t, lexer.raw(), lexer.integer());
        if (effort_next && t == JsonToken::String) f.reasoning_effort = lexer.raw();
        after_key = effort_next = false;
      });
}

}  // namespace

ApiOperation api_operation(std::string_view path) {
  if (path.ends_with("/chat/completions")) return ApiOperation::ChatCompletions;
  if (path.ends_with("/completions")) return ApiOperation::Completions;
  if (path.ends_with("/embeddings")) return ApiOperation::Embeddings;
  if (path.ends_with("/responses")) return ApiOperation::Responses;
  if (path.ends_with("/messages") || path.ends_with("/messages/count_tokens")) return ApiOperation::Messages;
  return ApiOperation::Other;
}

RequestBodyFacts read_request_body(std::string_view path, std::string_view body) {
  RequestBodyFacts f;
  f.operation = api_operation(path);
  f.body_size = body.size();
  f.json_object = read_object(body, f);
  if (!f.json_object) {  // what was noted before the error does not count
    RequestBodyFacts none;
    none.operation = f.operation;
    none.body_size = f.body_size;
    f = none;
  }
  return f;
}

}  // namespace smartlb::http
