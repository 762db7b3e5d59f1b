// ResponseReader (http1/http1_parser): heads and bodies in both body modes, a caller's buffer
// (body_buffer, refilled on need_buffer) and view mode (body_views + take_body_view).
// Input: two bytes choosing where the message is split, one byte of options (HEAD response,
// buffer size), then the bytes of the connection. Invariants: the parser never takes more
// bytes than it is given, a view lies inside the bytes of its put, and both modes, whole or
// in two pieces, give the same head, body and outcome.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_http1.hpp"

namespace {

using namespace smartlb;

struct Parsed {
  fuzz::Outcome outcome;
  std::string head;  // the head as parsed, when it was complete
  std::string body;
};

Parsed parse(std::string_view msg, std::size_t split, std::uint8_t options, bool views) {
  http1::ResponseHead head;
  http1::ResponseReader p(head);
  p.skip(options & 1);
  Parsed r;
  if (views) {
    p.body_views(true);
    r.outcome = fuzz::drive(p, msg, split, [&](const char* data, std::size_t used) {
      const std::string_view v = p.take_body_view();
      if (v.empty()) return;
      if (v.data() < data || v.data() + v.size() > data + used) __builtin_trap();  // outside the put
      r.body.append(v);
    });
  } else {
    std::vector<char> buf(1 + (options >> 1));  // 1..128 bytes: many need_buffer stops
    p.body_buffer(buf.data(), buf.size());
    r.outcome = fuzz::drive(p, msg, split, [&](const char*, std::size_t) {
      if (p.body_buffer_left() > buf.size()) __builtin_trap();
      r.body.append(buf.data(), buf.size() - p.body_buffer_left());
      p.body_buffer(buf.data(), buf.size());
    });
  }
  if (r.outcome.done) {
    // 1xx, 204 and 304 have no body whatever Content-Length says (RFC 9112 section 6.3).
    const bool bodiless = head.status / 100 == 1 || head.status == 204 || head.status == 304;
    if (!p.chunked() && p.content_length() && !(options & 1) && !bodiless &&
        r.body.size() != *p.content_length())
      __builtin_trap();
    if ((options & 1) && !r.body.empty()) __builtin_trap();  // a response to HEAD has no body
  }
  if (p.is_header_done() || r.outcome.done)
    r.head = std::to_string(head.status) + " " + head.reason + " " + std::to_string(head.version) + "\n" +
             fuzz::fields_text(head.fields);
  if (!r.outcome.done) r.body.clear();  // a failed message's partial body may end anywhere
  return r;
}

bool same(const Parsed& a, const Parsed& b) {
  if (!fuzz::same(a.outcome, b.outcome)) return false;
  if (a.outcome.ec) return true;  // failed both ways: where it stopped may differ
  return a.head == b.head && a.body == b.body;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::size_t split_at = data[0] | (data[1] << 8);
  const std::uint8_t options = data[2];
  const std::string_view msg(reinterpret_cast<const char*>(data + 3), size - 3);
  const std::size_t split = split_at % (msg.size() + 1);

  const Parsed whole = parse(msg, msg.size(), options, false);
  if (!same(whole, parse(msg, split, options, false))) __builtin_trap();
  if (!same(whole, parse(msg, msg.size(), options, true))) __builtin_trap();
  if (!same(whole, parse(msg, split, options, true))) __builtin_trap();
  return 0;
}
