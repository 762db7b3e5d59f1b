#include "smartlb/token_estimate.hpp"

#include <nlohmann/json.hpp>

namespace smartlb {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Characters of text in a prompt-like value: strings, arrays of strings or of content parts
// ({"text": ...}), token arrays (4 characters a token).
std::size_t text_characters(const nlohmann::json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().size();
  if (v.is_number_integer()) return 4;
  std::size_t total = 0;
  if (v.is_array()) {
    for (const auto& item : v) total += text_characters(item);
  } else if (v.is_object()) {
    if (auto t = v.find("text"); t != v.end()) total += text_characters(*t);
    if (auto c = v.find("content"); c != v.end()) total += text_characters(*c);
  }
  return total;
}

std::int64_t completion_budget(const nlohmann::json& body) {
  for (const char* key : {"max_tokens", "max_completion_tokens", "max_output_tokens"}) {
    auto it = body.find(key);
    if (it != body.end() && it->is_number_integer() && it->get<std::int64_t>() > 0) return it->get<std::int64_t>();
  }
  return kDefaultMaxTokensEstimate;
}

}  // namespace

std::int64_t estimate_request_tokens(std::string_view path, std::string_view body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return static_cast<std::int64_t>((body.size() + 3) / 4) + kDefaultMaxTokensEstimate;
  std::size_t chars = 0;
  bool completion = true;
  if (ends_with(path, "/chat/completions")) {
    if (auto m = json.find("messages"); m != json.end()) chars = text_characters(*m);
  } else if (ends_with(path, "/completions")) {
    if (auto p = json.find("prompt"); p != json.end()) chars = text_characters(*p);
  } else if (ends_with(path, "/embeddings")) {
    if (auto i = json.find("input"); i != json.end()) chars = text_characters(*i);
    completion = false;  // embeddings produce no completion tokens
  } else if (ends_with(path, "/responses")) {
    if (auto i = json.find("input"); i != json.end()) chars = text_characters(*i);
  } else {
    chars = body.size();
  }
  // Rounded up and at least one: never below the backend's own (rounded-down) estimate.
  const std::int64_t prompt = std::max<std::int64_t>(static_cast<std::int64_t>((chars + 3) / 4), 1);
  return prompt + (completion ? completion_budget(json) : 0);
}

}  // namespace smartlb
