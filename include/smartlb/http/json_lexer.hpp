#pragma once
// The one JSON lexer: every reader of JSON on the proxied path (a request body's top-level
// members and their rewrite, the facts the request path reads from a body, the first events of a
// stream) pulls tokens from it, so they all agree on what JSON is. It validates as it goes and
// allocates nothing (unless containers nest deeper than kInlineJsonLevels).
//
// Valid means an RFC 8259 JSON text, exactly as nlohmann::json (the differential tests' oracle)
// reads one but for a NUL byte (nlohmann ends its input there):
//   * one value with whitespace (space, tab, LF, CR) around it and nothing else; a NUL byte
//     anywhere is invalid;
//   * a UTF-8 byte-order mark at the very start is skipped (RFC 8259 section 8.1 allows that);
//   * strings: UTF-8 checked byte by byte (no overlong forms, no encoded surrogates, nothing past
//     U+10FFFF), no raw control characters, only the RFC's escapes, \u surrogates in pairs;
//   * numbers: the RFC's grammar, and a value a double can hold: a number that rounds to
//     infinity (1e400) is refused;
//   * any depth (a bit per open container).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace smartlb::http {

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
  End,      // the text ended, valid: next() keeps answering End
  Invalid,  // not valid JSON: next() keeps answering Invalid
};

// Containers nested up to this depth cost no allocation.
inline constexpr std::size_t kInlineJsonLevels = 256;

namespace json_detail {
using Byte = unsigned char;
// A string's end: `quote` is its closing quote (nullptr: invalid), `shrink` what its escapes
// lose once decoded (0: it has none). From the byte after the opening quote.
struct StringEnd {
  const Byte* quote;
  std::size_t shrink;
};
StringEnd scan_string(const Byte* p, const Byte* stop);
// Past the plain bytes at p (printable ASCII but '"' and '\\'), 16 at a time while 16 are left
// (SSE2; elsewhere p itself): the first byte that is not plain, or one of the last 15.
[[gnu::always_inline]] inline const Byte* skip_plain_16(const Byte* p, const Byte* stop) {
#if defined(__SSE2__)
  while (stop - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed: bytes >= 0x80 are negative, so below 0x20 too.
    const __m128i special = _mm_or_si128(
        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    if (const int mask = _mm_movemask_epi8(special)) return p + std::countr_zero(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  (void)stop;
  return p;
}
// scan_string with its common case inline: plain bytes up to the quote.
[[gnu::always_inline]] inline StringEnd scan_plain_string(const Byte* p, const Byte* stop) {
  p = skip_plain_16(p, stop);
  if (p != stop && *p == '"') return {p, 0};  // every byte before p is plain
  return scan_string(p, stop);
}
// A number's end (nullptr: invalid), and whether it has neither fraction nor exponent.
struct NumberEnd {
  const Byte* end;
  bool integer;
};
NumberEnd scan_number(const Byte* p, const Byte* stop);
}  // namespace json_detail

// The lexer's state is a few pointers and counts, handed to nothing outside this header (its
// scanners take and return plain values), so a reader's loop keeps it in registers.
class JsonLexer {
 public:
  explicit JsonLexer(std::string_view text)
      : start_(reinterpret_cast<const Byte*>(text.data())), p_(start_), stop_(start_ + text.size()) {
    if (text.starts_with("\xEF\xBB\xBF")) p_ += 3;
  }

  JsonToken next();

  // Of the token next() returned last:
  // Where it starts in the text (a string's or a key's opening quote) and where it ends (past
  // the closing quote or bracket, the last digit or letter; a key ends at its closing quote).
  std::size_t begin() const { return static_cast<std::size_t>(begin_ - start_); }
  std::size_t end() const { return static_cast<std::size_t>(end_ - start_); }
  // Key and String: the text between the quotes, escapes as written. Number: its text.
  std::string_view raw() const {
    return {reinterpret_cast<const char*>(raw_begin_), static_cast<std::size_t>(raw_end_ - raw_begin_)};
  }
  // Key and String: whether `raw` holds an escape, and its size in bytes once unescaped.
  bool escaped() const { return shrink_ != 0; }
  std::size_t decoded_size() const { return static_cast<std::size_t>(raw_end_ - raw_begin_) - shrink_; }
  // Number: no fraction and no exponent.
  bool integer() const { return integer_; }
  // The containers open after the token: a Begin* counts the one it opened, an End* not the one
  // it closed; for any other token, the depth of the container that holds it.
  std::size_t depth() const { return depth_; }

 private:
  using Byte = json_detail::Byte;
  enum class Expect : std::uint8_t { Value, FirstMember, Member, FirstElement, After, Done, Failed };

  JsonToken value();
  JsonToken key();
  JsonToken after_value();
  JsonToken fail() {
    expect_ = Expect::Failed;
    return JsonToken::Invalid;
  }
  JsonToken open(bool object);
  JsonToken close(bool object);
  [[gnu::always_inline]] void skip_ws() {
    // Compact JSON has no whitespace: one comparison for a byte that cannot be any.
    if (p_ == stop_ || *p_ > ' ') return;
    const Byte* p = p_;
    while (p != stop_ && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    p_ = p;
  }
  bool string();  // at the opening quote
  bool literal(std::string_view word);
  bool kind_at(std::size_t depth) const;  // whether the container at `depth` is an object

  const Byte* start_;
  const Byte* p_;
  const Byte* stop_;
  const Byte* begin_ = nullptr;
  const Byte* end_ = nullptr;
  const Byte* raw_begin_ = nullptr;
  const Byte* raw_end_ = nullptr;
  std::size_t shrink_ = 0;
  bool integer_ = false;
  Expect expect_ = Expect::Value;
  bool in_object_ = false;  // the innermost open container is an object
  std::size_t depth_ = 0;
  // Bit i: whether the container at depth i + 1 is an object; deeper ones on the heap.
  std::uint64_t inline_kinds_[kInlineJsonLevels / 64] = {};
  std::unique_ptr<std::vector<bool>> deeper_kinds_;
};

// Calls on_token(token) for each token next() returns up to the text's end: true when the text
// is valid (the reader's loop, with the lexer's state in registers once inlined).
template <class OnToken>
[[gnu::always_inline]] inline bool for_each_json_token(JsonLexer& lexer, OnToken&& on_token) {
  for (;;) {
    const JsonToken t = lexer.next();
    if (t == JsonToken::End) return true;
    if (t == JsonToken::Invalid) return false;
    on_token(t);
  }
}

// Whether the raw text of a string the lexer accepted (escapes as written) reads as `text`.
bool json_raw_equals(std::string_view raw, std::string_view text);

// The raw text of a string the lexer accepted, with its escapes decoded into `buf` when it has
// any; nullopt when the decoded text would not fit in `buf` (readers compare it with short names,
// none of which it can be then).
std::optional<std::string_view> json_decode_short(std::string_view raw, std::span<char> buf);
inline std::optional<std::string_view> json_short_text(std::string_view raw, bool escaped,
                                                       std::span<char> buf) {
  if (!escaped) return raw;
  return json_decode_short(raw, buf);
}

// ---- inline: the state machine (its callers are in other files) ----

[[gnu::always_inline]] inline JsonToken JsonLexer::next() {
  skip_ws();
  switch (expect_) {
    case Expect::Value:
      return value();
    case Expect::FirstMember:
      if (p_ != stop_ && *p_ == '}') return close(true);
      return key();
    case Expect::Member:
      return key();
    case Expect::FirstElement:
      if (p_ != stop_ && *p_ == ']') return close(false);
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

[[gnu::always_inline]] inline JsonToken JsonLexer::value() {
  if (p_ == stop_) return fail();
  begin_ = p_;
  switch (*p_) {
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
    default: {
      const json_detail::NumberEnd n = json_detail::scan_number(p_, stop_);
      if (n.end == nullptr) return fail();
      raw_begin_ = p_;
      raw_end_ = p_ = end_ = n.end;
      integer_ = n.integer;
      expect_ = Expect::After;
      return JsonToken::Number;
    }
  }
}

[[gnu::always_inline]] inline bool JsonLexer::string() {
  const json_detail::StringEnd s = json_detail::scan_plain_string(p_ + 1, stop_);
  if (s.quote == nullptr) return false;
  raw_begin_ = p_ + 1;
  raw_end_ = s.quote;
  shrink_ = s.shrink;
  p_ = end_ = s.quote + 1;
  return true;
}

[[gnu::always_inline]] inline bool JsonLexer::literal(std::string_view word) {
  if (static_cast<std::size_t>(stop_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
    return false;
  p_ = end_ = p_ + word.size();
  expect_ = Expect::After;
  return true;
}

[[gnu::always_inline]] inline JsonToken JsonLexer::key() {
  if (p_ == stop_ || *p_ != '"') return fail();
  begin_ = p_;
  if (!string()) return fail();
  skip_ws();
  if (p_ == stop_ || *p_ != ':') return fail();
  ++p_;
  expect_ = Expect::Value;
  return JsonToken::Key;
}

[[gnu::always_inline]] inline JsonToken JsonLexer::after_value() {
  if (depth_ == 0) {
    if (p_ != stop_) return fail();
    expect_ = Expect::Done;
    return JsonToken::End;
  }
  if (p_ == stop_) return fail();
  if (*p_ == ',') {
    ++p_;
    skip_ws();
    return in_object_ ? key() : value();
  }
  if (*p_ != (in_object_ ? '}' : ']')) return fail();
  return close(in_object_);
}

inline bool JsonLexer::kind_at(std::size_t depth) const {
  const std::size_t i = depth - 1;
  if (i < kInlineJsonLevels) return (inline_kinds_[i / 64] >> (i % 64) & 1) != 0;
  return (*deeper_kinds_)[i - kInlineJsonLevels];
}

[[gnu::always_inline]] inline JsonToken JsonLexer::open(bool object) {
  if (depth_ < kInlineJsonLevels) {
    const std::uint64_t bit = std::uint64_t{1} << (depth_ % 64);
    if (object) {
      inline_kinds_[depth_ / 64] |= bit;
    } else {
      inline_kinds_[depth_ / 64] &= ~bit;
    }
  } else {
    if (!deeper_kinds_) deeper_kinds_ = std::make_unique<std::vector<bool>>();
    deeper_kinds_->push_back(object);
  }
  ++depth_;
  in_object_ = object;
  end_ = ++p_;
  expect_ = object ? Expect::FirstMember : Expect::FirstElement;
  return object ? JsonToken::BeginObject : JsonToken::BeginArray;
}

[[gnu::always_inline]] inline JsonToken JsonLexer::close(bool object) {
  begin_ = p_;
  end_ = ++p_;
  --depth_;
  if (depth_ >= kInlineJsonLevels) deeper_kinds_->pop_back();
  if (depth_ > 0) in_object_ = kind_at(depth_);
  expect_ = Expect::After;
  return object ? JsonToken::EndObject : JsonToken::EndArray;
}

}  // namespace smartlb::http
