#include "json_lexer.hpp"

#include <cstring>

namespace smartlb::stateful::detail {
namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

void JsonLexer::skip_ws() {
  while (p_ < text_.size()) {
    const char c = text_[p_];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    ++p_;
  }
}

JsonToken JsonLexer::next() {
  skip_ws();
  switch (expect_) {
    case Expect::Value:
      return value();
    case Expect::FirstMember:
      if (p_ < text_.size() && text_[p_] == '}') return close(true);
      return key();
    case Expect::Member:
      return key();
    case Expect::FirstElement:
      if (p_ < text_.size() && text_[p_] == ']') return close(false);
      return value();
    case Expect::After:
      return after_value();
    case Expect::Done:
      return JsonToken::End;
    case Expect::Failed:
      break;
  }
  return JsonToken::Invalid;
}

JsonToken JsonLexer::value() {
  if (p_ >= text_.size()) return fail();
  begin_ = p_;
  switch (text_[p_]) {
    case '{':
      return open(true);
    case '[':
      return open(false);
    case '"':
      if (!string()) return fail();
      expect_ = Expect::After;
      return JsonToken::String;
    case 't':
      return literal("true") ? JsonToken::True : fail();
    case 'f':
      return literal("false") ? JsonToken::False : fail();
    case 'n':
      return literal("null") ? JsonToken::Null : fail();
    default:
      if (!number()) return fail();
      expect_ = Expect::After;
      return JsonToken::Number;
  }
}

JsonToken JsonLexer::key() {
  if (p_ >= text_.size() || text_[p_] != '"') return fail();
  begin_ = p_;
  if (!string()) return fail();
  skip_ws();
  if (p_ >= text_.size() || text_[p_] != ':') return fail();
  ++p_;
  expect_ = Expect::Value;
  return JsonToken::Key;
}

JsonToken JsonLexer::after_value() {
  if (kinds_.empty()) {
    if (p_ != text_.size()) return fail();
    expect_ = Expect::Done;
    return JsonToken::End;
  }
  if (p_ >= text_.size()) return fail();
  const bool object = kinds_.back();
  if (text_[p_] == ',') {
    ++p_;
    skip_ws();
    return object ? key() : value();
  }
  if (text_[p_] != (object ? '}' : ']')) return fail();
  return close(object);
}

JsonToken JsonLexer::open(bool object) {
  if (kinds_.size() >= kMaxDepth) return fail();
  kinds_.push_back(object);
  end_ = ++p_;
  expect_ = object ? Expect::FirstMember : Expect::FirstElement;
  return object ? JsonToken::BeginObject : JsonToken::BeginArray;
}

JsonToken JsonLexer::close(bool object) {
  begin_ = p_;
  end_ = ++p_;
  kinds_.pop_back();
  expect_ = Expect::After;
  return object ? JsonToken::EndObject : JsonToken::EndArray;
}

bool JsonLexer::string() {
  std::size_t i = p_ + 1;
  const std::size_t n = text_.size();
  while (i < n) {
    const char* q = static_cast<const char*>(std::memchr(text_.data() + i, '"', n - i));
    const std::size_t stop = q ? static_cast<std::size_t>(q - text_.data()) : n;
    // The bytes up to the candidate quote: no control characters, valid escapes.
    for (; i < stop; ++i) {
      const auto c = static_cast<unsigned char>(text_[i]);
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (++i >= n) return false;
      switch (text_[i]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          break;
        case 'u':
          if (n - i < 5 || !is_hex(text_[i + 1]) || !is_hex(text_[i + 2]) || !is_hex(text_[i + 3]) ||
              !is_hex(text_[i + 4]))
            return false;
          i += 4;
          break;
        default:
          return false;
      }
    }
    if (i == stop) {  // not escaped: the closing quote (or the end of the text)
      if (stop >= n) return false;
      p_ = end_ = stop + 1;
      return true;
    }
    // The candidate quote was an escape's (\"): i is past it; search on from there.
  }
  return false;
}

bool JsonLexer::number() {
  std::size_t i = p_;
  const std::size_t n = text_.size();
  if (i < n && text_[i] == '-') ++i;
  if (i >= n) return false;
  if (text_[i] == '0') {
    ++i;
  } else if (is_digit(text_[i])) {
    while (i < n && is_digit(text_[i])) ++i;
  } else {
    return false;
  }
  if (i < n && text_[i] == '.') {
    ++i;
    if (i >= n || !is_digit(text_[i])) return false;
    while (i < n && is_digit(text_[i])) ++i;
  }
  if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
    ++i;
    if (i < n && (text_[i] == '+' || text_[i] == '-')) ++i;
    if (i >= n || !is_digit(text_[i])) return false;
    while (i < n && is_digit(text_[i])) ++i;
  }
  p_ = end_ = i;
  return true;
}

bool JsonLexer::literal(std::string_view word) {
  if (text_.substr(p_, word.size()) != word) return false;
  p_ = end_ = p_ + word.size();
  expect_ = Expect::After;
  return true;
}

}  // namespace smartlb::stateful::detail
