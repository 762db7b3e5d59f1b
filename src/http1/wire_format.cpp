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

void HeadWriter::status_line(unsigned version, unsigned status, std::string_view reason) {
  if (reason.empty()) {
    reason = beast::http::obsolete_reason(static_cast<beast::http::status>(status));
    if (reason == "<unknown-status>") reason = {};
  }
  char* p = room(13 + reason.size() + 2);  // "HTTP/1.x NNN " reason CRLF
  std::memcpy(p, version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ", 9);
  const unsigned code = status % 1000;
  p[9] = static_cast<char>('0' + code / 100);
  p[10] = static_cast<char>('0' + code / 10 % 10);
  p[11] = static_cast<char>('0' + code % 10);
  p[12] = ' ';
  if (!reason.empty()) std::memcpy(p + 13, reason.data(), reason.size());
  p[13 + reason.size()] = '\r';
  p[14 + reason.size()] = '\n';
  at_ += 15 + reason.size();
}

void append_status_line(std::string& out, unsigned version, unsigned status, std::string_view reason) {
  HeadWriter(out).status_line(version, status, reason);
}

std::size_t chunk_size_line(std::size_t n, char (&line)[20]) {
  const int len = std::snprintf(line, sizeof line, "%zx\r\n", n);
  return static_cast<std::size_t>(len);
}

}  // namespace smartlb::http1
