// Shared by fuzz_http1_request and fuzz_http1_response: feeds a message to an Http1Parser the
// way read_http does (a read buffer; what the parser did not take waits for the next read),
// in two pieces split at a chosen byte, then the end of the stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/http1/http1_parser.hpp"

namespace smartlb::fuzz {

using io::error_code;
namespace beast = io::beast;

struct Outcome {
  error_code ec;      // the parser's error (never need_more / need_buffer)
  bool done = false;  // a whole message
  std::size_t used = 0;
};

// `on_put(data, used)` is called after every put with the bytes it was given and how many it
// took (before they are dropped from the buffer).
template <class Parser, class OnPut>
Outcome drive(Parser& p, std::string_view msg, std::size_t split, OnPut on_put) {
  Outcome out;
  std::string pending;
  // Parses what the buffer holds; true when the message is finished (done or failed).
  auto pump = [&]() -> bool {
    for (;;) {
      error_code ec;
      const std::size_t n = p.put(pending.data(), pending.size(), ec);
      if (n > pending.size()) __builtin_trap();  // took more bytes than it was given
      on_put(pending.data(), n);
      pending.erase(0, n);
      out.used += n;
      if (ec == beast::http::error::need_more) return false;
      if (ec == beast::http::error::need_buffer) continue;  // on_put gave it a fresh buffer
      if (ec) {
        out.ec = ec;
        return true;
      }
      if (p.is_done()) return true;
      if (n == 0) {
        if (pending.empty()) return false;
        __builtin_trap();  // no progress, no error, bytes left: a read loop would spin
      }
    }
  };
  split = split > msg.size() ? msg.size() : split;
  pending.append(msg.substr(0, split));
  bool finished = pump();
  if (!finished) {
    pending.append(msg.substr(split));
    finished = pump();
  }
  if (!finished) {
    error_code ec;
    p.put_eof(ec);
    out.ec = ec;
  }
  out.done = p.is_done();
  if (out.done && out.ec) __builtin_trap();  // done and failed at once
  return out;
}

// Two runs over the same bytes agree. A malformed message must fail both ways, but which
// error it reports may depend on where the bytes were split: the parser reports the first
// problem in the bytes it has (a bare LF fails at once, before the whole head is there).
inline bool same(const Outcome& a, const Outcome& b) {
  if (a.ec && b.ec) return a.ec.category() == b.ec.category() && !a.done && !b.done;
  return a.ec == b.ec && a.done == b.done && a.used == b.used;
}

inline std::string fields_text(const http1::HeaderList& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto f = fields[i];
    s.append(f.name).append(": ").append(f.value).append("\n");
  }
  return s;
}

}  // namespace smartlb::fuzz
