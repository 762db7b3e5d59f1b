// StreamStart (http/stream_start): the start of an event stream, judged from bytes a backend
// sends. Input: one byte choosing the piece size and the limit, then a body.
// Invariants: the verdict fed in pieces (as a growing prefix) equals the verdict fed at once;
// once it leaves Hold it never changes; Hold never outlives the limit. And its JSON reading
// agrees with nlohmann's: the body, as the value of a member of an event without content
// (`{"choices":[],"v":<body>}`), holds when nlohmann accepts both, and is released as it is
// when nlohmann refuses the event.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "smartlb/http/stream_start.hpp"

namespace {

using namespace smartlb;

void check_splits(std::uint8_t opt, std::string_view body) {
  const std::size_t piece = 1 + (opt & 15);                            // 1..16 bytes
  const std::size_t limit = (opt & 16) ? 64 : std::size_t{64} * 1024;  // reach the limit, or not

  http::StreamStart whole(limit);
  whole.advance(body);

  http::StreamStart pieces(limit);
  http::StartVerdict first = http::StartVerdict::Hold;
  http::StartReason first_reason = http::StartReason::None;
  for (std::size_t n = 0;; n = std::min(body.size(), n + piece)) {
    const http::StartVerdict v = pieces.advance(body.substr(0, n));
    if (first != http::StartVerdict::Hold && (v != first || pieces.reason() != first_reason))
      __builtin_trap();
    if (first == http::StartVerdict::Hold) {
      first = v;
      first_reason = pieces.reason();
    }
    if (v == http::StartVerdict::Hold && n >= limit) __builtin_trap();
    if (n == body.size()) break;
  }
  if (pieces.verdict() != whole.verdict() || pieces.reason() != whole.reason()) __builtin_trap();
  (void)http::classify_stream_error(body);
}

// `value` (no CR: it would end an SSE line) as the value of a member of a chat chunk without
// content, sent as one event whose data lines are its lines.
void check_json_reading(std::string_view value) {
  if (value.find('\r') != std::string_view::npos) return;
  const std::string json = "{\"choices\":[],\"v\":" + std::string(value) + "}";
  std::string body = "data: ";
  for (const char c : json) {
    body += c;
    if (c == '\n') body += "data: ";
  }
  body += "\n\n";
  http::StreamStart s(body.size() + 1);
  s.advance(body);
  // A value valid alone cannot close the object to add members: the event has no content.
  if (nlohmann::json::accept(value) && nlohmann::json::accept(json) &&
      s.verdict() != http::StartVerdict::Hold)
    __builtin_trap();
  if (!nlohmann::json::accept(json) &&
      (s.verdict() != http::StartVerdict::Release || s.reason() != http::StartReason::Content))
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  check_splits(data[0], body);
  check_json_reading(body);
  return 0;
}
