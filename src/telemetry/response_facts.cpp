#include "smartlb/telemetry/response_facts.hpp"

#include <array>
#include <cstdint>

#include "smartlb/http/json_lexer.hpp"

namespace smartlb::telemetry {
namespace {

struct Text {
  std::string_view raw;  // as written (escapes undecoded); empty: none
  bool escaped = false;
};

// The string values one document offers, as views into it: kept only once it proved valid.
struct Found {
  Text id, model;
  std::array<Text, ResponseFacts::kMaxFinishReasons> reasons{};
  std::size_t n_reasons = 0;
};

enum class Want : std::uint8_t { Nothing, Id, Model, FinishReason };
// The top-level member being read, when its shape is the one that holds what we want.
enum class Scope : std::uint8_t { Other, Response, Choices };

bool scan(std::string_view json, Found& found) {
  http::JsonLexer lex(json);
  Want want = Want::Nothing;
  Scope scope = Scope::Other;
  bool scope_opened = true;  // the top-level member's value began (its first token was read)
  for (;;) {
    const http::JsonToken t = lex.next();
    if (t == http::JsonToken::Invalid) return false;
    if (t == http::JsonToken::End) return true;
    const std::size_t depth = lex.depth();
    if (!scope_opened) {  // `response` must be an object and `choices` an array
      scope_opened = true;
      if ((scope == Scope::Response && t != http::JsonToken::BeginObject) ||
          (scope == Scope::Choices && t != http::JsonToken::BeginArray))
        scope = Scope::Other;
    }
    if (t == http::JsonToken::Key) {
      const std::string_view key = lex.raw();
      const bool escaped = lex.escaped();  // rare: a plain key compares as it is
      const auto is = [&](std::string_view name) {
        return escaped ? http::json_raw_equals(key, name) : key == name;
      };
      want = Want::Nothing;
      if (depth == 1) {
        scope = is("response") ? Scope::Response : is("choices") ? Scope::Choices : Scope::Other;
        scope_opened = false;
      }
      if (depth == 1 || (depth == 2 && scope == Scope::Response))
        want = is("id") ? Want::Id : is("model") ? Want::Model : Want::Nothing;
      else if (depth == 3 && scope == Scope::Choices && is("finish_reason"))
        want = Want::FinishReason;
      continue;
    }
    if (t == http::JsonToken::String && want != Want::Nothing) {
      const Text text{lex.raw(), lex.escaped()};
      if (want == Want::Id)
        found.id = text;
      else if (want == Want::Model)
        found.model = text;
      else if (found.n_reasons < found.reasons.size())
        found.reasons[found.n_reasons++] = text;
    }
    want = Want::Nothing;
  }
}

// `text` decoded, or empty when it is empty or longer than kMaxText.
std::string_view decoded(const Text& text, std::array<char, ResponseFacts::kMaxText>& buf) {
  if (text.raw.empty() || (!text.escaped && text.raw.size() > buf.size())) return {};
  return http::json_short_text(text.raw, text.escaped, buf).value_or(std::string_view{});
}

}  // namespace

void read_response_facts(std::string_view json, ResponseFacts& facts) {
  Found found;
  if (!scan(json, found)) return;
  std::array<char, ResponseFacts::kMaxText> buf;
  if (facts.id.empty()) facts.id = decoded(found.id, buf);
  if (facts.model.empty()) facts.model = decoded(found.model, buf);
  for (std::size_t i = 0;
       i < found.n_reasons && facts.finish_reasons.size() < ResponseFacts::kMaxFinishReasons; ++i)
    if (const std::string_view reason = decoded(found.reasons[i], buf); !reason.empty())
      facts.finish_reasons.emplace_back(reason);
}

}  // namespace smartlb::telemetry
