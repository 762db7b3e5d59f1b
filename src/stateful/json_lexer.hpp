#pragma once
// The stateful module's own JSON lexer: a pull lexer with the interface of http/json_lexer
// (branch json-lexer), kept private to this module until that one lands, so that the id
// rewriters can switch to it by changing an include.
//
// Valid means RFC 8259 structure: one value, whitespace around it, strings without raw control
// characters and with the RFC's escapes only (\u with four hex digits), numbers by the RFC's
// grammar, nesting at most kMaxDepth deep. UTF-8 is not checked: the rewriters copy every byte
// they do not understand.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace smartlb::stateful::detail {

enum class JsonToken : std::uint8_t {
  BeginObject,
  EndObject,
  BeginArray,
  EndArray,
  Key,  // a member's name (its colon is read with it)
  String,
  Number,
  True,
  False,
  Null,
  End,      // the text ended, valid
  Invalid,  // not valid JSON: next() keeps answering Invalid
};

class JsonLexer {
 public:
  static constexpr std::size_t kMaxDepth = 1024;

  explicit JsonLexer(std::string_view text) : text_(text) {}

  JsonToken next();

  // Of the token next() returned last: where it starts (a string's or key's opening quote) and
  // ends (past the closing quote, bracket or last character).
  std::size_t begin() const { return begin_; }
  std::size_t end() const { return end_; }
  // Key and String: the text between the quotes, escapes as written.
  std::string_view raw() const { return text_.substr(begin_ + 1, end_ - begin_ - 2); }
  // The containers open after the token (a Begin* counts its own, an End* not its own).
  std::size_t depth() const { return kinds_.size(); }
  // Whether the innermost open container is an object.
  bool in_object() const { return !kinds_.empty() && kinds_.back(); }

 private:
  enum class Expect : std::uint8_t { Value, FirstMember, Member, FirstElement, After, Done, Failed };
  JsonToken value();
  JsonToken key();
  JsonToken after_value();
  JsonToken open(bool object);
  JsonToken close(bool object);
  JsonToken fail() {
    expect_ = Expect::Failed;
    return JsonToken::Invalid;
  }
  bool string();  // at the opening quote
  bool number();
  bool literal(std::string_view word);
  void skip_ws();

  std::string_view text_;
  std::size_t p_ = 0;
  std::size_t begin_ = 0, end_ = 0;
  Expect expect_ = Expect::Value;
  std::vector<bool> kinds_;  // per open container: an object?
};

}  // namespace smartlb::stateful::detail
