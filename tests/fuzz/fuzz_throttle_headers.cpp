// parse_retry_hint (routing/throttle_headers) and its building blocks. The input is split at
// '\n' into the seven header fields of ThrottleHeaders, in declaration order. Invariants: a
// delay is never negative; the building blocks agree with the whole (a milliseconds header
// that parses wins).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "smartlb/routing/throttle_headers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smartlb;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view* fields[7];
  http::ThrottleHeaders h;
  fields[0] = &h.retry_after_ms;
  fields[1] = &h.x_ms_retry_after_ms;
  fields[2] = &h.retry_after;
  fields[3] = &h.reset_requests;
  fields[4] = &h.reset_tokens;
  fields[5] = &h.remaining_requests;
  fields[6] = &h.remaining_tokens;
  for (std::string_view* f : fields) {
    const auto nl = rest.find('\n');
    *f = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
  }

  // A fixed wall clock: Sun, 06 Nov 1994 08:49:37 GMT.
  const auto wall_now = std::chrono::system_clock::time_point(std::chrono::seconds(784111777));
  const auto hint = routing::parse_retry_hint(h, wall_now);
  if (hint && hint->count() < 0) __builtin_trap();

  for (std::string_view* f : fields) {
    for (const bool ms : {true, false})
      if (auto d = routing::parse_number_delay(*f, ms); d && d->count() < 0) __builtin_trap();
    if (auto d = routing::parse_duration_string(*f); d && d->count() < 0) __builtin_trap();
    (void)routing::parse_http_date(*f);
  }
  if (auto ms = routing::parse_number_delay(h.retry_after_ms, true); ms && (!hint || *hint != *ms))
    __builtin_trap();
  return 0;
}
