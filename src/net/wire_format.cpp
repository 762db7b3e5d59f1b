#include "net/wire_format.hpp"

#include <cstdio>

namespace smartlb::net {
namespace {

void append_fields(std::string& out, const http::fields& f) {
  for (const auto& field : f) {
    const auto name = field.name_string();
    const auto value = field.value();
    out.append(name.data(), name.size());
    out.append(": ", 2);
    out.append(value.data(), value.size());
    out.append("\r\n", 2);
  }
  out.append("\r\n", 2);
}

}  // namespace

void append_request_head(std::string& out, const http::request_header<>& h) {
  const auto method = h.method_string();
  const auto target = h.target();
  out.append(method.data(), method.size());
  out.push_back(' ');
  out.append(target.data(), target.size());
  out.append(h.version() == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
  append_fields(out, h);
}

void append_response_head(std::string& out, const http::response_header<>& h) {
  char status[8];
  const int n = std::snprintf(status, sizeof status, " %03u ", h.result_int() % 1000);
  out.append(h.version() == 10 ? "HTTP/1.0" : "HTTP/1.1");
  out.append(status, static_cast<std::size_t>(n));
  auto reason = h.reason();
  if (reason.empty()) reason = http::obsolete_reason(h.result());
  out.append(reason.data(), reason.size());
  out.append("\r\n", 2);
  append_fields(out, h);
}

std::size_t chunk_size_line(std::size_t n, char (&line)[20]) {
  const int len = std::snprintf(line, sizeof line, "%zx\r\n", n);
  return static_cast<std::size_t>(len);
}

}  // namespace smartlb::net
