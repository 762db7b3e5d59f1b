#pragma once
// Small text helpers that several modules need: hexadecimal digits both ways, names compared
// in any case, optional whitespace trimmed.
#include <span>
#include <string>
#include <string_view>

namespace smartlb::base {

// The value of a hexadecimal digit (either case), or -1.
constexpr int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of a lower-case hexadecimal digit, or -1 (W3C trace context allows no other).
constexpr int lower_hex_digit_value(char c) { return c >= 'A' && c <= 'F' ? -1 : hex_digit_value(c); }

// The hexadecimal digit of `v` (0 to 15), lower case unless `upper`.
constexpr char hex_digit(unsigned v, bool upper = false) {
  return (upper ? "0123456789ABCDEF" : "0123456789abcdef")[v & 15];
}

// `bytes` as lower-case hexadecimal (two digits a byte), appended to `out`.
inline void append_hex(std::string& out, std::span<const unsigned char> bytes) {
  for (const unsigned char b : bytes) {
    out += hex_digit(b >> 4);
    out += hex_digit(b & 15);
  }
}

// `s` without the spaces and tabs around it (HTTP's optional whitespace).
constexpr std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// ASCII case-insensitive equality (header names, tokens). Inline: every field of every message
// is compared with it.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

}  // namespace smartlb::base
