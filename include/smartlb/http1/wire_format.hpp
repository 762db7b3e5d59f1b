#pragma once
// Message heads written as flat strings. Beast's serializer walks a buffer sequence of several
// buffers per header field at every write; a head built once and sent in one write with the
// body costs a fraction of that (docs/architecture.md, "Beast traps handled").
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace smartlb::http1 {

// "name: value\r\n" at `p`, which has room for name.size() + value.size() + 4 bytes.
inline void write_field(char* p, std::string_view name, std::string_view value) {
  std::memcpy(p, name.data(), name.size());
  p += name.size();
  *p++ = ':';
  *p++ = ' ';
  if (!value.empty()) std::memcpy(p, value.data(), value.size());  // (an empty view's data may be null)
  p += value.size();
  *p++ = '\r';
  *p = '\n';
}

// "name: value\r\n"
inline void append_field(std::string& out, std::string_view name, std::string_view value) {
  // One resize and two copies instead of four appends (this runs for every field passed on).
  const std::size_t at = out.size();
  out.resize(at + name.size() + value.size() + 4);
  write_field(out.data() + at, name, value);
}

// Writes a head's pieces into `out` after what it holds, making room in large steps and cutting
// `out` to what was written at the end (`finish`, or the destructor). One resize for a whole
// head where append_field resizes (zero-fills and checks the capacity) for every field: a
// response head is written for every answer.
class HeadWriter {
 public:
  explicit HeadWriter(std::string& out) : out_(out), at_(out.size()) {}
  HeadWriter(const HeadWriter&) = delete;
  HeadWriter& operator=(const HeadWriter&) = delete;
  ~HeadWriter() { finish(); }

  // "HTTP/1.x code reason\r\n": the reason phrase given, else the standard one.
  void status_line(unsigned version, unsigned status, std::string_view reason);
  // "name: value\r\n"
  void field(std::string_view name, std::string_view value) {
    const std::size_t n = name.size() + value.size() + 4;
    write_field(room(n), name, value);
    at_ += n;
  }
  void text(std::string_view s) {
    if (s.empty()) return;
    std::memcpy(room(s.size()), s.data(), s.size());
    at_ += s.size();
  }
  // Cuts `out` to what was written (a shrink: no copy, no fill).
  void finish() { out_.resize(at_); }

 private:
  char* room(std::size_t n) {
    if (out_.size() - at_ < n) out_.resize(std::max({at_ + n, out_.capacity(), 2 * out_.size()}));
    return out_.data() + at_;
  }

  std::string& out_;
  std::size_t at_;
};

// The decimal digits of `n`.
void append_decimal(std::string& out, std::uint64_t n);
// "HTTP/1.x code reason\r\n": the reason phrase the backend sent, else the standard one.
void append_status_line(std::string& out, unsigned version, unsigned status, std::string_view reason);
// A chunk-size line for `n` bytes: hex digits + CRLF, written into `line`; returns its length.
std::size_t chunk_size_line(std::size_t n, char (&line)[20]);

}  // namespace smartlb::http1
