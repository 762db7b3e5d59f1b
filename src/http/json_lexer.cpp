#include "smartlb/http/json_lexer.hpp"

#include <array>
#include <bit>
#include <cstring>

#include "smartlb/base/text.hpp"

namespace smartlb::http {
namespace {

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

constexpr std::uint8_t char_class(int c) {
  if (c < 0x20) return kControl;
  if (c == '"') return kQuote;
  if (c == '\\') return kBackslash;
  if (c < 0x80) return kPlain;
  if (c >= 0xC2 && c <= 0xDF) return kLead2;
  if (c == 0xE0) return kLeadE0;
  if (c == 0xED) return kLeadED;
  if (c >= 0xE1 && c <= 0xEF) return kLead3;
  if (c == 0xF0) return kLeadF0;
  if (c >= 0xF1 && c <= 0xF3) return kLead4;
  if (c == 0xF4) return kLeadF4;
  return kIllFormed;
}

constexpr std::array<std::uint8_t, 256> kCharClass = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = char_class(c);
  return t;
}();

constexpr bool in(Byte c, Byte lo, Byte hi) { return c >= lo && c <= hi; }
constexpr bool is_digit(Byte c) { return c >= '0' && c <= '9'; }

// The value of the 4 hex digits at p (at least 4 bytes there), or -1.
int hex4(const Byte* p) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = base::hex_digit_value(static_cast<char>(p[i]));
    if (d < 0) return -1;
    v = v << 4 | d;
  }
  return v;
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

// The first byte in [p, end) that is not plain (kPlain), or end. Most of a body is in its
// strings: 16 bytes at a time (SSE2), then 8 (SWAR).
[[gnu::always_inline]] inline const Byte* skip_plain(const Byte* p, const Byte* end) {
  p = json_detail::skip_plain_16(p, end);
  if constexpr (std::endian::native == std::endian::little) {
    while (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if (const std::uint64_t special = special_bytes(w)) return p + (std::countr_zero(special) >> 3);
      p += 8;
    }
  }
  while (p != end && kCharClass[*p] == kPlain) ++p;
  return p;
}

// The escape at p (a backslash), checked: its length in the text (0: invalid) and, in
// `decoded`, its length once decoded in UTF-8.
std::size_t escape_length(const Byte* p, const Byte* end, std::size_t& decoded) {
  if (end - p < 2) return 0;
  switch (p[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      decoded = 1;
      return 2;
    case 'u':
      break;
    default:
      return 0;
  }
  if (end - p < 6) return 0;
  const int cp = hex4(p + 2);
  if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return 0;  // not hex, or a low surrogate alone
  if (cp >= 0xD800 && cp <= 0xDBFF) {                      // must be followed by \u and a low one
    if (end - p < 12 || p[6] != '\\' || p[7] != 'u') return 0;
    const int low = hex4(p + 8);
    if (low < 0xDC00 || low > 0xDFFF) return 0;
    decoded = 4;
    return 12;
  }
  decoded = cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
  return 6;
}

// The length of the well-formed UTF-8 sequence at p, whose lead byte has class `k` (0: ill-formed).
std::size_t utf8_length(const Byte* p, const Byte* end, std::uint8_t k) {
  switch (k) {
    case kLead2:
      return end - p >= 2 && in(p[1], 0x80, 0xBF) ? 2 : 0;
    case kLeadE0:
    case kLead3:
    case kLeadED: {
      const Byte lo = k == kLeadE0 ? 0xA0 : 0x80, hi = k == kLeadED ? 0x9F : 0xBF;
      return end - p >= 3 && in(p[1], lo, hi) && in(p[2], 0x80, 0xBF) ? 3 : 0;
    }
    case kLeadF0:
    case kLead4:
    case kLeadF4: {
      const Byte lo = k == kLeadF0 ? 0x90 : 0x80, hi = k == kLeadF4 ? 0x8F : 0xBF;
      return end - p >= 4 && in(p[1], lo, hi) && in(p[2], 0x80, 0xBF) && in(p[3], 0x80, 0xBF) ? 4 : 0;
    }
    default:  // kControl, kIllFormed
      return 0;
  }
}

// 2^1024 - 2^970, halfway between DBL_MAX and 2^1024: the least decimal that strtod (correctly
// rounded, ties to even) turns into infinity.
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

std::string_view view(const Byte* begin, const Byte* end) {
  return {reinterpret_cast<const char*>(begin), static_cast<std::size_t>(end - begin)};
}

// Appends the UTF-8 form of code point `cp` to buf, returns its length.
std::size_t encode_utf8(std::uint32_t cp, char* buf) {
  if (cp < 0x80) {
    buf[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    buf[0] = static_cast<char>(0xC0 | (cp >> 6));
    buf[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    buf[0] = static_cast<char>(0xE0 | (cp >> 12));
    buf[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  buf[0] = static_cast<char>(0xF0 | (cp >> 18));
  buf[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  buf[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  buf[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

// Decodes the next character of a valid string's raw text at raw[i] into buf (at least 4
// bytes): its length there; i moves past it.
std::size_t decode_next(std::string_view raw, std::size_t& i, char* buf) {
  if (raw[i] != '\\') {
    buf[0] = raw[i++];
    return 1;
  }
  const char e = raw[i + 1];
  i += 2;
  switch (e) {
    case 'b':
      buf[0] = '\b';
      return 1;
    case 'f':
      buf[0] = '\f';
      return 1;
    case 'n':
      buf[0] = '\n';
      return 1;
    case 'r':
      buf[0] = '\r';
      return 1;
    case 't':
      buf[0] = '\t';
      return 1;
    case 'u':
      break;
    default:  // " \ /
      buf[0] = e;
      return 1;
  }
  const auto* p = reinterpret_cast<const Byte*>(raw.data()) + i;
  auto cp = static_cast<std::uint32_t>(hex4(p));
  i += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {  // the lexer checked that the low half follows
    cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<std::uint32_t>(hex4(p + 6)) - 0xDC00);
    i += 6;
  }
  return encode_utf8(cp, buf);
}

// A string's bytes from p, past its plain ones: escapes, UTF-8 sequences and plain runs up to
// the closing quote, which it returns (nullptr: invalid). `shrink` grows by what the escapes
// lose once decoded.
[[gnu::noinline]] const Byte* scan_string_rest(const Byte* p, const Byte* stop, std::size_t& shrink) {
  for (;;) {
    if (p == stop) return nullptr;
    const std::uint8_t k = kCharClass[*p];
    if (k == kQuote) return p;
    std::size_t n;
    if (k == kBackslash) {
      std::size_t decoded = 0;
      n = escape_length(p, stop, decoded);
      shrink += n - decoded;
    } else {
      n = utf8_length(p, stop, k);
    }
    if (n == 0) return nullptr;
    p = skip_plain(p + n, stop);
  }
}

}  // namespace

namespace json_detail {

// Most strings are plain bytes up to their quote: only the others leave this fast path.
StringEnd scan_string(const Byte* p, const Byte* stop) {
  p = skip_plain(p, stop);
  std::size_t shrink = 0;
  if (p == stop || *p != '"') p = scan_string_rest(p, stop, shrink);
  return {p, shrink};
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, that a double can hold.
NumberEnd scan_number(const Byte* p, const Byte* stop) {
  if (*p == '-') ++p;
  const Byte* const int_begin = p;
  if (p == stop || !is_digit(*p)) return {nullptr, false};
  if (*p == '0') {
    ++p;
  } else {
    while (p != stop && is_digit(*p)) ++p;
  }
  const Byte* const int_end = p;
  const Byte* frac_begin = p;
  const Byte* frac_end = p;
  if (p != stop && *p == '.') {
    frac_begin = ++p;
    if (p == stop || !is_digit(*p)) return {nullptr, false};
    while (p != stop && is_digit(*p)) ++p;
    frac_end = p;
  }
  bool exponent = false;
  std::int64_t power = 0;
  if (p != stop && (*p == 'e' || *p == 'E')) {
    exponent = true;
    ++p;
    bool negative = false;
    if (p != stop && (*p == '+' || *p == '-')) negative = *p++ == '-';
    if (p == stop || !is_digit(*p)) return {nullptr, false};
    for (; p != stop && is_digit(*p); ++p)
      if (power < 1'000'000'000'000'000) power = power * 10 + (*p - '0');  // saturates, far past 308
    if (negative) power = -power;
  }
  // Without an exponent, at most 308 integer digits are below DBL_MAX.
  if ((exponent || int_end - int_begin > 308) &&
      overflows_double(view(int_begin, int_end), view(frac_begin, frac_end), power))
    return {nullptr, false};
  return {p, !exponent && frac_begin == int_end};
}

}  // namespace json_detail

bool json_raw_equals(std::string_view raw, std::string_view text) {
  if (raw.find('\\') == std::string_view::npos) return raw == text;
  std::size_t k = 0;
  for (std::size_t i = 0; i < raw.size();) {
    char buf[4];
    const std::size_t len = decode_next(raw, i, buf);
    if (text.size() - k < len || std::memcmp(text.data() + k, buf, len) != 0) return false;
    k += len;
  }
  return k == text.size();
}

std::optional<std::string_view> json_decode_short(std::string_view raw, std::span<char> buf) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < raw.size();) {
    char c[4];
    const std::size_t len = decode_next(raw, i, c);
    if (buf.size() - n < len) return std::nullopt;
    std::memcpy(buf.data() + n, c, len);
    n += len;
  }
  return std::string_view(buf.data(), n);
}

}  // namespace smartlb::http
