#pragma once
// Small text helpers that several modules need: hexadecimal digits both ways.
#include <span>
#include <string>

namespace smartlb {

// The value of a hexadecimal digit (either case), or -1.
constexpr int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

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

}  // namespace smartlb
