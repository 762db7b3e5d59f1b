#pragma once
// Random JSON-ish request bodies for the differential tests against nlohmann::json (the lexer,
// the request body's facts, the token estimate): mostly valid objects with the keys the request
// path reads, escapes, UTF-8 and number edge cases, then sometimes mutated into invalid ones.
#include <cstddef>
#include <cstdint>
#include <string>

namespace smartlb {

// A deterministic generator of JSON-ish bodies (its own arithmetic: std distributions differ
// between standard libraries).
class JsonGenerator {
 public:
  explicit JsonGenerator(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool chance(std::size_t percent) { return below(100) < percent; }
  template <std::size_t N>
  const char* pick(const char* const (&a)[N]) {
    return a[below(N)];
  }

  std::string body() {
    std::string out;
    if (chance(2)) out += "\xEF\xBB\xBF";
    ws(out);
    if (chance(95)) {
      object(out, 0, true);
    } else {
      value(out, 0, false);
    }
    ws(out);
    if (chance(3)) out += std::string("\0", 1) + (chance(50) ? "garbage" : "");
    mutate(out);
    return out;
  }

 private:
  void ws(std::string& out) {
    if (!chance(20)) return;
    static const char* const kWs[] = {" ", "\n", "\t", "\r", "  ", " \n\t"};
    out += pick(kWs);
  }

  void key(std::string& out, bool top) {
    static const char* const kTop[] = {"messages",
                                       "prompt",
                                       "input",
                                       "max_tokens",
                                       "max_completion_tokens",
                                       "max_output_tokens",
                                       "model",
                                       "user",
                                       "prompt_cache_key",
                                       "us\\u0065r",
                                       "role",
                                       "m\\u0065ssages",
                                       "max_\\u0074okens",
                                       "\\u0070rompt",
                                       "inpu\\u0074",
                                       "max_tokens\\u0000",
                                       "",
                                       "text",
                                       "content"};
    static const char* const kInner[] = {
        "text", "content",    "role", "type", "te\\u0078t", "c\\u006Fntent", "image_url",
        "url",  "content\\n", "x",    "",     "messages",   "max_tokens"};
    out += '"';
    if (chance(85)) {
      out += top ? pick(kTop) : pick(kInner);
    } else {
      string_body(out);
    }
    out += '"';
  }

  void object(std::string& out, int depth, bool top) {
    out += '{';
    ws(out);
    const std::size_t n = below(top ? 6 : 4);
    for (std::size_t i = 0; i < n; ++i) {
      if (i) {
        out += ',';
        ws(out);
      }
      key(out, top);
      ws(out);
      out += ':';
      ws(out);
      value(out, depth + 1, top);
      ws(out);
    }
    out += '}';
  }

  void array(std::string& out, int depth) {
    out += '[';
    ws(out);
    const std::size_t n = below(5);
    for (std::size_t i = 0; i < n; ++i) {
      if (i) {
        out += ',';
        ws(out);
      }
      value(out, depth + 1, false);
      ws(out);
    }
    out += ']';
  }

  void value(std::string& out, int depth, bool under_top) {
    const std::size_t k = below(depth > 5 ? 60 : 100);
    if (k < 25) {
      out += '"';
      string_body(out);
      out += '"';
    } else if (k < 45) {
      number(out, under_top);
    } else if (k < 60) {
      static const char* const kLiterals[] = {"true", "false",  "null", "tru",
                                              "nul",  "falsee", "True", "nulL"};
      out += chance(90) ? kLiterals[below(3)] : pick(kLiterals);
      if (out.back() == 'e' && chance(5)) out += 'x';
    } else if (k < 80) {
      array(out, depth);
    } else {
      object(out, depth, false);
    }
  }

  void number(std::string& out, bool under_top) {
    static const char* const kSpecial[] = {"0",
                                           "-0",
                                           "1",
                                           "100",
                                           "9223372036854775807",
                                           "9223372036854775808",
                                           "18446744073709551615",
                                           "18446744073709551616",
                                           "-9223372036854775808",
                                           "-9223372036854775809",
                                           "1e309",
                                           "-1e309",
                                           "1e308",
                                           "1.7976931348623157e308",
                                           "1.7976931348623159e308",
                                           "01",
                                           "-",
                                           "1.",
                                           ".5",
                                           "1e",
                                           "1e+",
                                           "-01",
                                           "+1",
                                           "0.5",
                                           "2.0",
                                           "1E3",
                                           "1e-3",
                                           "123456789012345678901234567890",
                                           "00",
                                           "1.5e",
                                           "0x1",
                                           "-a"};
    if (chance(15)) {
      out += pick(kSpecial);
      return;
    }
    if (chance(20)) out += '-';
    const std::size_t digits = 1 + below(under_top ? 5 : 22);
    out += static_cast<char>('1' + below(9));
    for (std::size_t i = 1; i < digits; ++i) out += static_cast<char>('0' + below(10));
    if (chance(15)) {
      out += '.';
      for (std::size_t i = below(4) + (chance(95) ? 1 : 0); i > 0; --i)
        out += static_cast<char>('0' + below(10));
    }
    if (chance(10)) {
      out += chance(50) ? 'e' : 'E';
      if (chance(50)) out += chance(50) ? '+' : '-';
      for (std::size_t i = below(4) + (chance(95) ? 1 : 0); i > 0; --i)
        out += static_cast<char>('0' + below(10));
    }
  }

  void hex4(std::string& out, unsigned v) {
    static const char kHex[] = "0123456789abcdefABCDEF";
    for (int shift = 12; shift >= 0; shift -= 4) {
      const unsigned d = (v >> shift) & 0xF;
      out += d >= 10 && chance(50) ? kHex[d + 6] : kHex[d];
    }
  }

  void string_body(std::string& out) {
    const std::size_t pieces = below(8);
    for (std::size_t i = 0; i < pieces; ++i) {
      const std::size_t k = below(100);
      if (k < 40) {
        static const char* const kText[] = {"hello",
                                            "The quick brown fox jumps over the lazy dog. ",
                                            "a",
                                            " ",
                                            "0123456789abcdef",
                                            "x/y",
                                            "'",
                                            "{}[],:"};
        out += pick(kText);
      } else if (k < 55) {
        static const char* const kEscapes[] = {"\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t"};
        out += pick(kEscapes);
      } else if (k < 70) {
        out += "\\u";
        static const unsigned kCodes[] = {0x0000, 0x001F, 0x007F, 0x0080, 0x07FF,
                                          0x0800, 0xFFFF, 0x00E9, 0xD7FF, 0xE000};
        const std::size_t c = below(10);
        if (c < 5) {
          hex4(out, kCodes[below(10)]);
        } else if (c < 8) {  // a surrogate pair, sometimes broken
          hex4(out, 0xD800 + static_cast<unsigned>(below(0x400)));
          if (chance(90)) {
            out += chance(95) ? "\\u" : "\\n";
            hex4(out, chance(90) ? 0xDC00 + static_cast<unsigned>(below(0x400))
                                 : static_cast<unsigned>(below(0x10000)));
          }
        } else {
          hex4(out, static_cast<unsigned>(below(0x10000)));
        }
      } else if (k < 85) {
        static const char* const kUtf8[] = {
            "\xC3\xA9",         "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xE4\xBD\xA0\xE5\xA5\xBD",
            "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF", "\xEE\x80\x80",     "\xC2\x80"};
        out += pick(kUtf8);
      } else if (k < 90) {
        // Random bytes at or above 0x80, forming valid UTF-8 or not.
        for (std::size_t j = below(4) + 1; j > 0; --j) out += static_cast<char>(0x80 + below(0x80));
      } else if (k < 92) {
        static const char* const kBadEscapes[] = {"\\x", "\\u12",   "\\uZZZZ", "\\a",
                                                  "\\0", "\\U0041", "\\u00G0"};
        out += pick(kBadEscapes);
      } else if (k < 94) {
        out += static_cast<char>(below(0x20));  // a raw control character
      } else {
        out += "abc";
      }
    }
  }

  void mutate(std::string& out) {
    const std::size_t k = below(100);
    if (k < 60 || out.empty()) return;
    const std::size_t mutations = 1 + below(3);
    for (std::size_t m = 0; m < mutations && !out.empty(); ++m) {
      const std::size_t at = below(out.size());
      const std::size_t kind = below(4);
      if (kind == 0) {
        out.erase(at, 1);
      } else if (kind == 1) {
        static const char kStructural[] = "\"\\{}[],:";
        const char c =
            chance(70) ? kStructural[below(sizeof kStructural - 1)] : static_cast<char>(0x80 + below(0x80));
        out.insert(at, 1, c);
      } else if (kind == 2) {
        out.resize(at);
      } else {
        out[at] = static_cast<char>(below(256));
      }
    }
  }

  std::uint64_t state_;
};

}  // namespace smartlb
