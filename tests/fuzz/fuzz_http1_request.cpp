// RequestReader (http1/http1_parser): heads and bodies (Content-Length, chunked, trailers).
// Input: two bytes choosing where the message is split, one byte of limits, then the bytes of
// the connection. Invariants: the parser never takes more bytes than it is given, never stops
// without progress or error, and a message fed in two pieces parses exactly like in one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_http1.hpp"

namespace {

using namespace smartlb;

struct Parsed {
  fuzz::Outcome outcome;
  std::string head;  // the head and body as parsed, when done
};

Parsed parse(std::string_view msg, std::size_t split, std::uint8_t limits) {
  http1::RequestHead head;
  http1::RequestReader p(head);
  if (limits & 1) p.header_limit(64 + (limits >> 1) * 16u);
  if (limits & 2) p.body_limit(static_cast<std::uint64_t>(limits >> 2));
  Parsed r;
  r.outcome = fuzz::drive(p, msg, split, [](const char*, std::size_t) {});
  if (r.outcome.done) {
    if (!p.chunked() && p.content_length() && head.body.size() != *p.content_length()) __builtin_trap();
    if ((limits & 2) && head.body.size() > static_cast<std::size_t>(limits >> 2)) __builtin_trap();
    r.head = head.method_text + " " + head.target + " " + std::to_string(head.version) + " " +
             std::to_string(p.keep_alive()) + "\n" + fuzz::fields_text(head.fields) + "\n" + head.body;
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::size_t split_at = data[0] | (data[1] << 8);
  const std::uint8_t limits = data[2];
  const std::string_view msg(reinterpret_cast<const char*>(data + 3), size - 3);

  const Parsed whole = parse(msg, msg.size(), limits);
  const Parsed pieces = parse(msg, split_at % (msg.size() + 1), limits);
  if (!fuzz::same(whole.outcome, pieces.outcome)) __builtin_trap();
  if (whole.outcome.done && whole.head != pieces.head) __builtin_trap();
  return 0;
}
