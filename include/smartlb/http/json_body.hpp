#pragma once
// The top-level members of a JSON request body, read and rewritten in one pass over its bytes,
// without building a DOM: the request path reads `model` (and the affinity keys) and applies
// override_params / a model rename to bodies of up to hundreds of KiB.
//
// "Valid" is what the JSON lexer accepts (http/json_lexer.hpp), with an object at the top.
//
// Keys are matched by what they mean, not how they are spelled: `"mod\u0065l"` is the member
// `model`. (Matching only the raw spelling would let a client keep a second, escaped `model`
// or `max_tokens` next to the one we rewrite, and most JSON parsers keep the last duplicate.)
// A key without a backslash costs one memcmp.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace smartlb::http {

// The raw text (between the quotes, escapes not decoded) of the top-level member `key` when
// its value is a string; with duplicate members the last one counts (as in nlohmann::json and
// Python's json). nullopt when `body` is not a valid JSON object, the member is absent, or its
// (last) value is not a string. The view points into `body`.
std::optional<std::string_view> top_level_string(std::string_view body, std::string_view key);

// The same for several keys in one pass: out[i] answers keys[i] (out.size() == keys.size()).
// False (and every out[i] nullopt) when `body` is not a valid JSON object.
bool top_level_strings(std::string_view body, std::span<const std::string_view> keys,
                       std::span<std::optional<std::string_view>> out);

// One change to a top-level member: set it to `json_value` (serialized JSON text, written as
// given and not validated: the caller makes it, e.g. with json_string or nlohmann's dump), or
// remove it (nullopt).
struct BodyEdit {
  std::string key;  // plain text, as the key means (not JSON-escaped)
  std::optional<std::string> json_value;
};

// `body` with every top-level member named by an edit removed (all of its occurrences) and,
// for an edit with a value, `"key":value` written once: in place of the first occurrence when
// there was one, else after the last member (with a comma when the object is not empty).
// Everything else (other members, whitespace, duplicates of other keys, bytes after the
// object's spaces) is copied byte for byte; without a matching member and without values the
// result equals `body`. When two edits name the same key the first one counts.
// nullopt when `body` is not a valid JSON object. One allocation (the result).
std::optional<std::string> edit_json_body(std::string_view body, std::span<const BodyEdit> edits);

// `text` as a JSON string literal, quotes included: `"`, `\` and control characters escaped
// (RFC 8259: \b \f \n \r \t, else \u00XX), every other byte copied. `text` is expected to be
// UTF-8 (configuration values are); invalid bytes are copied as they are.
std::string json_string(std::string_view text);
// The same, appended to `out`; json_string_size is its length.
void append_json_string(std::string& out, std::string_view text);
std::size_t json_string_size(std::string_view text);

}  // namespace smartlb::http
