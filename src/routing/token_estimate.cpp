#include "smartlb/routing/token_estimate.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace smartlb {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// One hand-written pass over the body reads what the estimate needs, and accepts exactly what
// nlohmann::json::sax_parse (strict, no comments) accepts: the estimate used to be an nlohmann
// SAX pass, whose lexer was nearly half the proxy's instructions per request with a declared
// quota. Nothing is allocated per string: strings are validated and measured (their length
// once unescaped, as nlohmann's string_t::size()), and only keys with escapes are decoded.
// tests/routing/token_estimate_test.cpp keeps the nlohmann reader as a differential oracle.

using Byte = unsigned char;

// What a byte inside a string is.
enum CharClass : std::uint8_t {
  kPlain,  // printable ASCII other than '"' and '\\'
  kQuote,
  kBackslash,
  kControl,    // < 0x20: must be escaped
  kLead2,      // C2..DF
  kLeadE0,     // E0: A0..BF then one continuation
  kLead3,      // E1..EC, EE, EF
  kLeadED,     // ED: 80..9F (no UTF-16 surrogates) then one continuation
  kLeadF0,     // F0: 90..BF then two continuations
  kLead4,      // F1..F3
  kLeadF4,     // F4: 80..8F (nothing above U+10FFFF) then two continuations
  kIllFormed,  // continuation bytes, C0, C1 (overlong), F5..FF
};

constexpr std::array<std::uint8_t, 256> make_char_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    std::uint8_t k = kIllFormed;
    if (c < 0x20)
      k = kControl;
    else if (c == '"')
      k = kQuote;
    else if (c == '\\')
      k = kBackslash;
    else if (c < 0x80)
      k = kPlain;
    else if (c >= 0xC2 && c <= 0xDF)
      k = kLead2;
    else if (c == 0xE0)
      k = kLeadE0;
    else if (c == 0xED)
      k = kLeadED;
    else if (c >= 0xE1 && c <= 0xEF)
      k = kLead3;
    else if (c == 0xF0)
      k = kLeadF0;
    else if (c >= 0xF1 && c <= 0xF3)
      k = kLead4;
    else if (c == 0xF4)
      k = kLeadF4;
    t[static_cast<std::size_t>(c)] = k;
  }
  return t;
}
constexpr std::array<std::uint8_t, 256> kCharClass = make_char_classes();

constexpr bool in(Byte c, Byte lo, Byte hi) { return c >= lo && c <= hi; }
constexpr bool is_ws(Byte c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr bool is_digit(Byte c) { return c >= '0' && c <= '9'; }
std::string_view view(const Byte* begin, const Byte* end) {
  return {reinterpret_cast<const char*>(begin), static_cast<std::size_t>(end - begin)};
}

// Bit 7 of each byte of the result is set for a byte of `w` that is not kPlain (< 0x20, '"',
// '\\' or >= 0x80). Only the lowest such byte is exact (borrows may flag bytes above it), which
// is all that is used: on a little-endian machine, that is the first special byte in memory.
inline std::uint64_t special_bytes(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  return (w | ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash)) &
         kHigh;
}

// The value of 4 hex digits at p (end - p >= 4), or -1.
inline int hex4(const Byte* p) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const Byte c = p[i];
    int d;
    if (is_digit(c))
      d = c - '0';
    else if (in(c, 'a', 'f'))
      d = c - 'a' + 10;
    else if (in(c, 'A', 'F'))
      d = c - 'A' + 10;
    else
      return -1;
    v = v << 4 | d;
  }
  return v;
}

// The longest key ever compared ("max_completion_tokens"); longer keys need no decoding.
constexpr std::size_t kMaxKey = 21;

class Scanner {
 public:
  Scanner(std::string_view body, std::string_view prompt_key)
      : p_(reinterpret_cast<const Byte*>(body.data())), end_(p_ + body.size()), prompt_key_(prompt_key) {}

  std::size_t characters = 0;
  std::int64_t budget[3] = {0, 0, 0};  // max_tokens, max_completion_tokens, max_output_tokens

  // Whether the body is valid JSON whose root is an object.
  bool run();

 private:
  // A frame is an open container: bit 0 object, bit 1 counted (arrays: their elements count
  // as prompt text; objects: their "text" and "content" members do).
  static constexpr std::uint8_t kObject = 1, kCounted = 2;

  void push(std::uint8_t f) {
    if (depth_ < kInlineFrames)
      inline_frames_[depth_] = f;
    else
      spill_frames_.push_back(f);
    ++depth_;
  }
  std::uint8_t top() const {
    return depth_ <= kInlineFrames ? inline_frames_[depth_ - 1] : spill_frames_.back();
  }
  void pop() {
    --depth_;
    if (depth_ >= kInlineFrames) spill_frames_.pop_back();
  }

  void skip_ws() {
    while (p_ != end_ && is_ws(*p_)) ++p_;
  }
  bool string(std::size_t& length, const Byte*& raw, bool& escaped);
  bool number(bool counts, int budget_slot);
  bool literal(const char* rest, std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, rest, n) != 0) return false;
    p_ += n;
    return true;
  }
  // The key just scanned (raw bytes [raw, p_ - 1), `length` once unescaped), decoded.
  std::string_view key(const Byte* raw, std::size_t length, bool escaped);

  const Byte* p_;
  const Byte* end_;
  std::string_view prompt_key_;
  static constexpr std::size_t kInlineFrames = 64;
  std::size_t depth_ = 0;
  std::uint8_t inline_frames_[kInlineFrames];
  std::vector<std::uint8_t> spill_frames_;  // deeper frames, rarely used
  char key_buf_[kMaxKey];
};

// Scans a string whose opening quote has just been read, leaving p_ after its closing quote:
// `length` is its length once unescaped, `raw` its first byte, `escaped` whether it has escapes.
bool Scanner::string(std::size_t& length, const Byte*& raw, bool& escaped) {
  const Byte* p = p_;
  const Byte* const end = end_;
  raw = p;
  std::size_t shrink = 0;  // escapes' raw bytes minus their decoded bytes
  for (;;) {
    // Skip plain bytes 16 (SSE2), then 8 (SWAR) at a time, up to the first special one.
#if defined(__SSE2__)
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Signed: bytes >= 0x80 are negative, so below 0x20 too.
      const __m128i special = _mm_or_si128(
          _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
          _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
      if (const int mask = _mm_movemask_epi8(special)) {
        p += std::countr_zero(static_cast<unsigned>(mask));
        goto not_plain;
      }
      p += 16;
    }
#endif
    if constexpr (std::endian::native == std::endian::little) {
      while (end - p >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        if (const std::uint64_t special = special_bytes(w)) {
          p += std::countr_zero(special) >> 3;
          break;
        }
        p += 8;
      }
    }
#if defined(__SSE2__)
  not_plain:
#endif
    if (p == end) return false;
    switch (kCharClass[*p]) {
      case kPlain:
        ++p;
        break;
      case kQuote:
        length = static_cast<std::size_t>(p - raw) - shrink;
        p_ = p + 1;
        return true;
      case kBackslash: {
        escaped = true;
        if (end - p < 2) return false;
        switch (p[1]) {
          case '"':
          case '\\':
          case '/':
          case 'b':
          case 'f':
          case 'n':
          case 'r':
          case 't':
            p += 2;
            shrink += 1;
            break;
          case 'u': {
            if (end - p < 6) return false;
            const int cp = hex4(p + 2);
            if (cp < 0) return false;
            if (cp >= 0xD800 && cp <= 0xDBFF) {  // must be followed by \u and a low surrogate
              if (end - p < 12 || p[6] != '\\' || p[7] != 'u') return false;
              const int low = hex4(p + 8);
              if (low < 0xDC00 || low > 0xDFFF) return false;
              p += 12;
              shrink += 12 - 4;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              return false;
            } else {
              p += 6;
              shrink += 6 - (cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3);
            }
            break;
          }
          default:
            return false;
        }
        break;
      }
      case kLead2:
        if (end - p < 2 || !in(p[1], 0x80, 0xBF)) return false;
        p += 2;
        break;
      case kLeadE0:
      case kLead3:
      case kLeadED: {
        const Byte k = kCharClass[*p];
        const Byte lo = k == kLeadE0 ? 0xA0 : 0x80, hi = k == kLeadED ? 0x9F : 0xBF;
        if (end - p < 3 || !in(p[1], lo, hi) || !in(p[2], 0x80, 0xBF)) return false;
        p += 3;
        break;
      }
      case kLeadF0:
      case kLead4:
      case kLeadF4: {
        const Byte k = kCharClass[*p];
        const Byte lo = k == kLeadF0 ? 0x90 : 0x80, hi = k == kLeadF4 ? 0x8F : 0xBF;
        if (end - p < 4 || !in(p[1], lo, hi) || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF)) return false;
        p += 4;
        break;
      }
      default:  // kControl, kIllFormed
        return false;
    }
  }
}

std::string_view Scanner::key(const Byte* raw, std::size_t length, bool escaped) {
  if (!escaped) return view(raw, raw + length);
  if (length > kMaxKey) return view(raw, raw + length);  // matches no key compared: too long
  // Already validated: decode without checks.
  std::size_t n = 0;
  for (const Byte* p = raw; *p != '"';) {
    if (*p != '\\') {
      key_buf_[n++] = static_cast<char>(*p++);
      continue;
    }
    const Byte e = p[1];
    if (e != 'u') {
      key_buf_[n++] = e == 'b'   ? '\b'
                      : e == 'f' ? '\f'
                      : e == 'n' ? '\n'
                      : e == 'r' ? '\r'
                      : e == 't' ? '\t'
                                 : static_cast<char>(e);
      p += 2;
      continue;
    }
    unsigned cp = static_cast<unsigned>(hex4(p + 2));
    p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<unsigned>(hex4(p + 2)) - 0xDC00);
      p += 6;
    }
    if (cp < 0x80) {
      key_buf_[n++] = static_cast<char>(cp);
    } else if (cp < 0x800) {
      key_buf_[n++] = static_cast<char>(0xC0 | cp >> 6);
      key_buf_[n++] = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      key_buf_[n++] = static_cast<char>(0xE0 | cp >> 12);
      key_buf_[n++] = static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      key_buf_[n++] = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      key_buf_[n++] = static_cast<char>(0xF0 | cp >> 18);
      key_buf_[n++] = static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      key_buf_[n++] = static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      key_buf_[n++] = static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return {key_buf_, n};
}

// 2^1024 - 2^970, halfway between DBL_MAX and 2^1024: the least decimal that strtod (correctly
// rounded, ties to even) turns into infinity, which nlohmann rejects as a number overflow.
constexpr std::string_view kDoubleOverflow =
    "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797758720709633"
    "0286"
    "41669288791094655554785194040263065748867150582068190890200070838367627385484581771153176447573027006985"
    "5571"
    "366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";

// Whether the number with integer digits `int_digits` (no leading zero unless "0"), fraction
// digits `frac_digits` (may be empty), times 10^`exponent`, is at least kDoubleOverflow.
bool overflows_double(std::string_view int_digits, std::string_view frac_digits, std::int64_t exponent) {
  // The significant digits, and the power of ten of the first.
  std::string_view a = int_digits, b = frac_digits;
  std::int64_t lead;
  if (a != "0") {
    lead = static_cast<std::int64_t>(a.size()) - 1;
  } else {
    const std::size_t nz = b.find_first_not_of('0');
    if (nz == std::string_view::npos) return false;  // zero
    lead = -static_cast<std::int64_t>(nz) - 1;
    a = b.substr(nz);
    b = {};
  }
  const std::int64_t power = lead + exponent;
  if (power != static_cast<std::int64_t>(kDoubleOverflow.size()) - 1) return power > 308;
  // Same magnitude: compare the digits with kDoubleOverflow's.
  std::size_t i = 0;
  for (const std::string_view part : {a, b})
    for (const char c : part) {
      if (i == kDoubleOverflow.size()) return true;  // equal so far and longer
      if (c != kDoubleOverflow[i]) return c > kDoubleOverflow[i];
      ++i;
    }
  return i == kDoubleOverflow.size();  // a shorter prefix is smaller (the bound ends in a 2)
}

// Scans a number at p_, as nlohmann does: integers (that fit in int64 if negative, uint64 if
// not) count 4 characters where counted, and may set a budget; others are doubles, which must
// be finite.
bool Scanner::number(bool counts, int budget_slot) {
  const Byte* p = p_;
  const bool negative = *p == '-';
  if (negative) ++p;
  const Byte* const int_begin = p;
  if (p == end_ || !is_digit(*p)) return false;
  if (*p == '0') {
    ++p;
  } else {
    while (p != end_ && is_digit(*p)) ++p;
  }
  const Byte* const int_end = p;
  const Byte* frac_begin = p;
  const Byte* frac_end = p;
  bool is_float = false;
  std::int64_t exponent = 0;
  if (p != end_ && *p == '.') {
    is_float = true;
    frac_begin = ++p;
    if (p == end_ || !is_digit(*p)) return false;
    while (p != end_ && is_digit(*p)) ++p;
    frac_end = p;
  }
  if (p != end_ && (*p == 'e' || *p == 'E')) {
    is_float = true;
    ++p;
    bool exp_negative = false;
    if (p != end_ && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
    if (p == end_ || !is_digit(*p)) return false;
    for (; p != end_ && is_digit(*p); ++p)
      if (exponent < 1'000'000'000'000'000) exponent = exponent * 10 + (*p - '0');  // saturates, far past 308
    if (exp_negative) exponent = -exponent;
  }
  p_ = p;

  const std::string_view int_digits = view(int_begin, int_end);
  if (!is_float) {
    // Does it fit nlohmann's integer types?
    const std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
    if (int_digits.size() < limit.size() || (int_digits.size() == limit.size() && int_digits <= limit)) {
      if (counts) characters += 4;
      if (budget_slot >= 0 && !negative && int_digits != "0" && budget[budget_slot] == 0) {
        std::uint64_t v = 0;
        for (const char c : int_digits) v = v * 10 + static_cast<std::uint64_t>(c - '0');
        budget[budget_slot] =
            v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
      }
      return true;
    }
  }
  return !overflows_double(int_digits, view(frac_begin, frac_end), exponent);
}

bool Scanner::run() {
  // nlohmann skips a UTF-8 byte order mark at the very start (and rejects a partial one).
  if (p_ != end_ && *p_ == 0xEF) {
    if (end_ - p_ < 3 || p_[1] != 0xBB || p_[2] != 0xBF) return false;
    p_ += 3;
  }
  skip_ws();
  if (p_ == end_ || *p_ != '{') return false;  // invalid, or valid but not an object

  bool counts = false;   // the value about to be read counts as prompt text
  int budget_slot = -1;  // the value about to be read is a top-level completion budget
  std::size_t length;
  const Byte* raw;
  bool escaped;
  // Each state below reads one token at p_ (after whitespace) and jumps to the next.
value:
  skip_ws();
  if (p_ == end_) return false;
  switch (*p_) {
    case '{':
      ++p_;
      push(static_cast<std::uint8_t>(kObject | (counts ? kCounted : 0)));
      skip_ws();
      if (p_ != end_ && *p_ == '}') {
        ++p_;
        pop();
        goto after_value;
      }
      goto member;
    case '[':
      ++p_;
      push(counts ? kCounted : 0);
      skip_ws();
      if (p_ != end_ && *p_ == ']') {
        ++p_;
        pop();
        goto after_value;
      }
      budget_slot = -1;
      goto value;
    case '"':
      ++p_;
      escaped = false;
      if (!string(length, raw, escaped)) return false;
      if (counts) characters += length;
      goto after_value;
    case 't':
      if (!literal("true", 4)) return false;
      goto after_value;
    case 'f':
      if (!literal("false", 5)) return false;
      goto after_value;
    case 'n':
      if (!literal("null", 4)) return false;
      goto after_value;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      if (!number(counts, budget_slot)) return false;
      goto after_value;
    default:
      return false;
  }

member:  // a key, ':', then its value
  skip_ws();
  if (p_ == end_ || *p_ != '"') return false;
  ++p_;
  escaped = false;
  if (!string(length, raw, escaped)) return false;
  budget_slot = -1;
  if (depth_ == 1) {
    const std::string_view k = key(raw, length, escaped);
    counts = k == prompt_key_;
    budget_slot = k == "max_tokens"              ? 0
                  : k == "max_completion_tokens" ? 1
                  : k == "max_output_tokens"     ? 2
                                                 : -1;
  } else if (top() & kCounted) {
    const std::string_view k = (length == 4 || length == 7) ? key(raw, length, escaped) : std::string_view{};
    counts = k == "text" || k == "content";
  } else {
    counts = false;
  }
  skip_ws();
  if (p_ == end_ || *p_ != ':') return false;
  ++p_;
  goto value;

after_value:  // ',' or the end of the enclosing container, or of the body
  if (depth_ == 0) {
    // Strict: only whitespace may follow, up to the end or a NUL byte (nlohmann's lexer reads
    // a NUL as the end of input).
    skip_ws();
    return p_ == end_ || *p_ == '\0';
  }
  skip_ws();
  if (p_ == end_) return false;
  {
    const std::uint8_t f = top();
    if (*p_ == ',') {
      ++p_;
      if (f & kObject) goto member;
      counts = (f & kCounted) != 0;
      budget_slot = -1;
      goto value;
    }
    if (*p_ != ((f & kObject) ? '}' : ']')) return false;
    ++p_;
    pop();
    goto after_value;
  }
}

}  // namespace

std::int64_t estimate_request_tokens(std::string_view path, std::string_view body) {
  std::string_view key;
  bool completion = true;
  bool whole_body = false;
  if (ends_with(path, "/chat/completions")) {
    key = "messages";
  } else if (ends_with(path, "/completions")) {
    key = "prompt";
  } else if (ends_with(path, "/embeddings")) {
    key = "input";
    completion = false;  // embeddings produce no completion tokens
  } else if (ends_with(path, "/responses")) {
    key = "input";
  } else {
    whole_body = true;
  }
  Scanner s(body, key);
  if (!s.run()) return static_cast<std::int64_t>((body.size() + 3) / 4) + kDefaultMaxTokensEstimate;
  const std::size_t chars = whole_body ? body.size() : s.characters;
  // Rounded up and at least one: never below the backend's own (rounded-down) estimate.
  const std::int64_t prompt = std::max<std::int64_t>(static_cast<std::int64_t>((chars + 3) / 4), 1);
  std::int64_t budget = kDefaultMaxTokensEstimate;
  for (const std::int64_t b : s.budget)
    if (b > 0) {
      budget = b;
      break;
    }
  // Saturating: a budget near INT64_MAX must not wrap the cost negative (which would free quota).
  const std::int64_t completion_budget = completion ? budget : 0;
  return completion_budget > INT64_MAX - prompt ? INT64_MAX : prompt + completion_budget;
}

}  // namespace smartlb
