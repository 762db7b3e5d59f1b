#pragma once
// Message heads written as flat strings. Beast's serializer walks a buffer sequence of several
// buffers per header field at every write; a head built once and sent in one write with the
// body costs a fraction of that (docs/architecture.md, "Beast traps handled").
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace smartlb::http1 {

// "name: value\r\n"
inline void append_field(std::string& out, std::string_view name, std::string_view value) {
  // One resize and two copies instead of four appends (this runs for every field passed on).
  const std::size_t at = out.size();
  out.resize(at + name.size() + value.size() + 4);
  char* p = out.data() + at;
  std::memcpy(p, name.data(), name.size());
  p += name.size();
  *p++ = ':';
  *p++ = ' ';
  std::memcpy(p, value.data(), value.size());
  p += value.size();
  *p++ = '\r';
  *p = '\n';
}
// The decimal digits of `n`.
void append_decimal(std::string& out, std::uint64_t n);
// "HTTP/1.x code reason\r\n": the reason phrase the backend sent, else the standard one.
void append_status_line(std::string& out, unsigned version, unsigned status, std::string_view reason);
// A chunk-size line for `n` bytes: hex digits + CRLF, written into `line`; returns its length.
std::size_t chunk_size_line(std::size_t n, char (&line)[20]);

}  // namespace smartlb::http1
