#include "smartlb/http1/wire_format.hpp"

#include <charconv>
#include <cstdio>

#include "smartlb/io/beast.hpp"

namespace smartlb::http1 {
using namespace smartlb::io;  // the Asio/Beast vocabulary (io/beast.hpp)

void append_decimal(std::string& out, std::uint64_t n) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, n);
  out.append(digits, static_cast<std::size_t>(r.ptr - digits));
}

void append_status_line(std::string& out, unsigned version, unsigned status, std::string_view reason) {
  out.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  const unsigned code = status % 1000;
  const char digits[3] = {static_cast<char>('0' + code / 100), static_cast<char>('0' + code / 10 % 10),
                          static_cast<char>('0' + code % 10)};
  out.append(digits, 3).push_back(' ');
  if (reason.empty()) {
    const std::string_view standard = http::obsolete_reason(static_cast<http::status>(status));
    if (standard != "<unknown-status>") out.append(standard);
  } else {
    out.append(reason);
  }
  out.append("\r\n", 2);
}

std::size_t chunk_size_line(std::size_t n, char (&line)[20]) {
  const int len = std::snprintf(line, sizeof line, "%zx\r\n", n);
  return static_cast<std::size_t>(len);
}

}  // namespace smartlb::http1
