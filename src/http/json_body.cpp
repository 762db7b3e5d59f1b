#include "smartlb/http/json_body.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace smartlb {
namespace {

// Bytes a string can hold without a closer look: printable ASCII other than `"` and `\`.
constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
  return t;
}();

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at s[pos..pos+4), or -1.
long hex4(std::string_view s, std::size_t pos) {
  if (s.size() < pos + 4) return -1;
  long v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int h = hex_value(s[pos + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the well-formed UTF-8 sequence starting at s[pos] (a byte >= 0x80), or 0
// (RFC 3629, table 3-7 of Unicode: no overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t pos) {
  const auto at = [&](std::size_t k) -> unsigned char {
    return pos + k < s.size() ? static_cast<unsigned char>(s[pos + k]) : 0;
  };
  const unsigned char c = at(0);
  if (c >= 0xC2 && c <= 0xDF) return is_continuation(at(1)) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return at(1) >= lo && at(1) <= hi && is_continuation(at(2)) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return at(1) >= lo && at(1) <= hi && is_continuation(at(2)) && is_continuation(at(3)) ? 4 : 0;
  }
  return 0;
}

// A validating scanner over one body. Every scan_* starts at `pos` and, on success, leaves
// `pos` just past what it scanned.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::size_t pos = 0;

  bool at_end() const { return pos >= s_.size(); }
  char peek() const { return s_[pos]; }
  void skip_ws() {
    while (pos < s_.size() && is_ws(s_[pos])) ++pos;
  }
  bool consume(char c) {
    if (pos < s_.size() && s_[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  // A string, at its opening quote. `escaped` tells whether it holds a backslash.
  bool scan_string(bool& escaped) {
    escaped = false;
    if (!consume('"')) return false;
    const std::size_t n = s_.size();
    while (pos < n) {
      while (pos < n && kPlainStringByte[static_cast<unsigned char>(s_[pos])]) ++pos;
      if (pos >= n) return false;
      const unsigned char c = static_cast<unsigned char>(s_[pos]);
      if (c == '"') {
        ++pos;
        return true;
      }
      if (c == '\\') {
        escaped = true;
        if (!scan_escape()) return false;
      } else if (c < 0x20) {
        return false;
      } else {
        const std::size_t len = utf8_sequence(s_, pos);
        if (len == 0) return false;
        pos += len;
      }
    }
    return false;
  }

  // Any value. Iterative: nesting is a bit per level (1: object). The value lies inside the
  // top-level object, so it may open kMaxJsonDepth - 1 levels.
  bool scan_value() {
    std::array<std::uint64_t, kMaxJsonDepth / 64> object_bits{};
    std::size_t depth = 0;
    const auto in_object = [&] { return (object_bits[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1u; };
    const auto push = [&](bool object) {
      const std::uint64_t bit = std::uint64_t{1} << (depth % 64);
      if (object) {
        object_bits[depth / 64] |= bit;
      } else {
        object_bits[depth / 64] &= ~bit;
      }
      ++depth;
    };
    for (;;) {
      // A value is expected here.
      skip_ws();
      if (at_end()) return false;
      bool scalar = true;
      switch (peek()) {
        case '{':
          if (depth == kMaxJsonDepth - 1) return false;  // counting an empty {} too
          ++pos;
          skip_ws();
          if (consume('}')) break;
          push(true);
          if (!scan_key_colon()) return false;
          scalar = false;
          break;
        case '[':
          if (depth == kMaxJsonDepth - 1) return false;
          ++pos;
          skip_ws();
          if (consume(']')) break;
          push(false);
          scalar = false;
          break;
        case '"': {
          bool escaped;
          if (!scan_string(escaped)) return false;
          break;
        }
        case 't':
          if (!scan_literal("true")) return false;
          break;
        case 'f':
          if (!scan_literal("false")) return false;
          break;
        case 'n':
          if (!scan_literal("null")) return false;
          break;
        default:
          if (!scan_number()) return false;
      }
      if (!scalar) continue;  // a container was opened: its first value follows
      // A value ended: close containers until one continues with a comma.
      for (;;) {
        if (depth == 0) return true;
        skip_ws();
        if (at_end()) return false;
        const bool object = in_object();
        if (consume(',')) {
          if (object && !scan_key_colon()) return false;
          break;
        }
        if (!consume(object ? '}' : ']')) return false;
        --depth;
      }
    }
  }

  // `"key"` then `:`, with the spaces around them (inside an object, past `{` or `,`).
  bool scan_key_colon() {
    skip_ws();
    bool escaped;
    if (!scan_string(escaped)) return false;
    skip_ws();
    return consume(':');
  }

 private:
  bool scan_escape() {  // at the backslash
    ++pos;
    if (at_end()) return false;
    switch (s_[pos]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        ++pos;
        return true;
      case 'u': {
        const long u = hex4(s_, pos + 1);
        if (u < 0) return false;
        pos += 5;
        if (u >= 0xDC00 && u <= 0xDFFF) return false;  // a low surrogate alone
        if (u >= 0xD800 && u <= 0xDBFF) {              // must be followed by a low one
          if (pos + 1 >= s_.size() || s_[pos] != '\\' || s_[pos + 1] != 'u') return false;
          const long lo = hex4(s_, pos + 2);
          if (lo < 0xDC00 || lo > 0xDFFF) return false;
          pos += 6;
        }
        return true;
      }
      default:
        return false;
    }
  }

  bool scan_literal(std::string_view word) {
    if (s_.substr(pos, word.size()) != word) return false;
    pos += word.size();
    return true;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool scan_number() {
    const auto digits = [&] {
      const std::size_t start = pos;
      while (pos < s_.size() && is_digit(s_[pos])) ++pos;
      return pos > start;
    };
    consume('-');
    if (consume('0')) {
    } else if (pos < s_.size() && s_[pos] >= '1' && s_[pos] <= '9') {
      digits();
    } else {
      return false;
    }
    if (consume('.') && !digits()) return false;
    if (pos < s_.size() && (s_[pos] == 'e' || s_[pos] == 'E')) {
      ++pos;
      if (!consume('+')) consume('-');
      if (!digits()) return false;
    }
    return true;
  }

  std::string_view s_;
};

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

// Whether the raw contents of a valid JSON string (escapes as written) decode to `key`.
bool decoded_equals(std::string_view raw, std::string_view key) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < raw.size();) {
    char buf[4];
    std::size_t len = 1;
    if (raw[i] != '\\') {
      buf[0] = raw[i++];
    } else {
      const char e = raw[i + 1];
      i += 2;
      switch (e) {
        case 'b':
          buf[0] = '\b';
          break;
        case 'f':
          buf[0] = '\f';
          break;
        case 'n':
          buf[0] = '\n';
          break;
        case 'r':
          buf[0] = '\r';
          break;
        case 't':
          buf[0] = '\t';
          break;
        case 'u': {
          std::uint32_t cp = static_cast<std::uint32_t>(hex4(raw, i));
          i += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // the scanner checked the low surrogate follows
            const auto lo = static_cast<std::uint32_t>(hex4(raw, i + 2));
            i += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          len = encode_utf8(cp, buf);
          break;
        }
        default:  // " \ /
          buf[0] = e;
      }
    }
    if (key.size() - k < len || std::memcmp(key.data() + k, buf, len) != 0) return false;
    k += len;
  }
  return k == key.size();
}

bool key_equals(std::string_view raw, bool escaped, std::string_view key) {
  return escaped ? decoded_equals(raw, key) : raw == key;
}

// One top-level member as found: `"key"` starts at `start`; its value spans
// [value_start, value_end).
struct Member {
  std::size_t start;
  std::string_view raw_key;
  bool key_escaped;
  std::size_t value_start, value_end;
};

// Calls on_member(const Member&) for each top-level member of the object `body`, in order,
// while validating all of it. `open_end` is set past the `{`. False when `body` is not a
// valid JSON object (members may have been reported before that is known).
template <class OnMember>
bool for_each_member(std::string_view body, std::size_t& open_end, OnMember&& on_member) {
  Scanner sc(body);
  sc.skip_ws();
  if (!sc.consume('{')) return false;
  open_end = sc.pos;
  sc.skip_ws();
  if (!sc.consume('}')) {
    for (;;) {
      sc.skip_ws();
      Member m;
      m.start = sc.pos;
      if (!sc.scan_string(m.key_escaped)) return false;
      m.raw_key = body.substr(m.start + 1, sc.pos - m.start - 2);
      sc.skip_ws();
      if (!sc.consume(':')) return false;
      sc.skip_ws();
      m.value_start = sc.pos;
      if (!sc.scan_value()) return false;
      m.value_end = sc.pos;
      on_member(m);
      sc.skip_ws();
      if (sc.consume(',')) continue;
      if (sc.consume('}')) break;
      return false;
    }
  }
  sc.skip_ws();
  return sc.at_end();
}

std::optional<std::string_view> string_contents(std::string_view body, const Member& m) {
  if (body[m.value_start] != '"') return std::nullopt;
  return body.substr(m.value_start + 1, m.value_end - m.value_start - 2);
}

}  // namespace

bool top_level_strings(std::string_view body, std::span<const std::string_view> keys,
                       std::span<std::optional<std::string_view>> out) {
  for (auto& o : out) o.reset();
  std::size_t open_end = 0;
  const bool valid = for_each_member(body, open_end, [&](const Member& m) {
    for (std::size_t i = 0; i < keys.size() && i < out.size(); ++i) {
      if (key_equals(m.raw_key, m.key_escaped, keys[i])) out[i] = string_contents(body, m);
    }
  });
  if (!valid) {
    for (auto& o : out) o.reset();
  }
  return valid;
}

std::optional<std::string_view> top_level_string(std::string_view body, std::string_view key) {
  std::optional<std::string_view> out;
  top_level_strings(body, std::span<const std::string_view>(&key, 1), std::span(&out, 1));
  return out;
}

std::optional<std::string> edit_json_body(std::string_view body, std::span<const BodyEdit> edits) {
  // Which edits have been written (or, for a later edit of the same key, are shadowed).
  constexpr std::size_t kInline = 64;
  std::array<bool, kInline> done_inline{};
  std::vector<bool> done_more;
  if (edits.size() > kInline) done_more.resize(edits.size() - kInline);
  const auto done = [&](std::size_t i) -> bool {
    return i < kInline ? done_inline[i] : static_cast<bool>(done_more[i - kInline]);
  };
  const auto set_done = [&](std::size_t i) {
    if (i < kInline) {
      done_inline[i] = true;
    } else {
      done_more[i - kInline] = true;
    }
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    for (std::size_t j = 0; j < i && !done(i); ++j) {
      if (edits[j].key == edits[i].key) set_done(i);
    }
  }

  std::size_t room = body.size();
  for (const BodyEdit& e : edits) {
    if (e.json_value) room += json_string_size(e.key) + 1 + e.json_value->size() + 1;  // : and ,
  }
  std::string out;
  out.reserve(room);

  const auto write_member = [&](const BodyEdit& e) {
    append_json_string(out, e.key);
    out += ':';
    out += *e.json_value;
  };
  std::size_t emitted = 0;
  std::size_t prev_end = 0;  // where the previous member (kept or not) ended
  bool any_member = false;
  std::size_t open_end = 0;
  const bool valid = for_each_member(body, open_end, [&](const Member& m) {
    // The `{` and the spaces before the first member stay even if that member goes; a member
    // written after another one keeps the separator (`,` and spaces) that preceded it.
    if (!any_member) out.append(body.substr(0, m.start));
    const auto separator = [&] {
      if (emitted > 0) out.append(body.substr(prev_end, m.start - prev_end));
    };
    std::optional<std::size_t> edit;
    for (std::size_t i = 0; i < edits.size(); ++i) {
      if (key_equals(m.raw_key, m.key_escaped, edits[i].key)) {
        edit = i;
        break;
      }
    }
    any_member = true;
    if (!edit) {
      separator();
      out.append(body.substr(m.start, m.value_end - m.start));
      ++emitted;
    } else if (edits[*edit].json_value && !done(*edit)) {
      separator();
      write_member(edits[*edit]);
      set_done(*edit);
      ++emitted;
    }
    prev_end = m.value_end;
  });
  if (!valid) return std::nullopt;

  if (!any_member) {
    out.append(body.substr(0, open_end));
    prev_end = open_end;
  }
  for (std::size_t i = 0; i < edits.size(); ++i) {
    if (!edits[i].json_value || done(i)) continue;
    if (emitted > 0) out += ',';
    write_member(edits[i]);
    ++emitted;
  }
  out.append(body.substr(prev_end));
  return out;
}

std::size_t json_string_size(std::string_view text) {
  std::size_t n = 2;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      n += 2;
    } else if (c < 0x20) {
      n += 6;
    } else {
      n += 1;
    }
  }
  return n;
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the bytes copied as they are
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.substr(run, i - run));
    run = i + 1;
    out += '\\';
    switch (c) {
      case '"':
      case '\\':
        out += static_cast<char>(c);
        break;
      case '\b':
        out += 'b';
        break;
      case '\f':
        out += 'f';
        break;
      case '\n':
        out += 'n';
        break;
      case '\r':
        out += 'r';
        break;
      case '\t':
        out += 't';
        break;
      default:
        out += "u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(text.substr(run));
  out += '"';
}

std::string json_string(std::string_view text) {
  std::string out;
  out.reserve(json_string_size(text));
  append_json_string(out, text);
  return out;
}

}  // namespace smartlb
