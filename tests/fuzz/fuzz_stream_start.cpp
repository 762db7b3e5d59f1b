// StreamStart (http/stream_start): the first event of an event stream, judged from bytes a
// backend sends. Input: one byte choosing the piece size and the limit, then a body.
// Invariants: the verdict fed in pieces (as a growing prefix) equals the verdict fed at once;
// once it leaves Hold it never changes; Hold never outlives the limit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "smartlb/http/stream_start.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smartlb;
  if (size < 1) return 0;
  const std::uint8_t opt = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t piece = 1 + (opt & 15);                            // 1..16 bytes
  const std::size_t limit = (opt & 16) ? 64 : std::size_t{64} * 1024;  // reach the limit, or not

  StreamStart whole(limit);
  whole.advance(body);

  StreamStart pieces(limit);
  StartVerdict first = StartVerdict::Hold;
  StartReason first_reason = StartReason::None;
  for (std::size_t n = 0;; n = std::min(body.size(), n + piece)) {
    const StartVerdict v = pieces.advance(body.substr(0, n));
    if (first != StartVerdict::Hold && (v != first || pieces.reason() != first_reason)) __builtin_trap();
    if (first == StartVerdict::Hold) {
      first = v;
      first_reason = pieces.reason();
    }
    if (v == StartVerdict::Hold && n >= limit) __builtin_trap();
    if (n == body.size()) break;
  }
  if (pieces.verdict() != whole.verdict() || pieces.reason() != whole.reason()) __builtin_trap();
  (void)classify_stream_error(body);
  return 0;
}
