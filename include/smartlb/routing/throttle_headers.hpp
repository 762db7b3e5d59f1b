#pragma once
// Reads how long a backend asks us to stay away, from every throttling header format seen
// in the wild. Pure: the caller hands in header values and the wall-clock time.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "smartlb/http/throttle_fields.hpp"

namespace smartlb::routing {

// The backend's requested delay, unclamped, or nullopt when no header holds a usable value.
// Milliseconds headers win, then Retry-After, then the rate-limit reset headers.
std::optional<std::chrono::milliseconds> parse_retry_hint(const http::ThrottleHeaders& h,
                                                          std::chrono::system_clock::time_point wall_now);

// What one response (any status) says about the backend's own budget for the deployment:
// `x-ratelimit-remaining-tokens` / `-requests` (Azure OpenAI and OpenAI send them on every
// answer) and, from OpenAI, when each limit is fully back (`x-ratelimit-reset-*`); or, without
// those, Anthropic's `anthropic-ratelimit-*` (tokens: the combined limit's, else the input
// tokens'; resets are times, read against `wall_now` when given).
struct RateLimitReport {
  std::optional<std::int64_t> remaining_tokens, remaining_requests;
  std::optional<std::chrono::milliseconds> reset_tokens, reset_requests;
  bool empty() const { return !remaining_tokens && !remaining_requests; }
};
RateLimitReport parse_rate_limit_report(const http::ThrottleHeaders& h,
                                        std::chrono::system_clock::time_point wall_now = {});

// Building blocks, exposed for tests.
// A count such as "4980" (an integral decimal; "12.0" is read as 12); nullopt for junk.
std::optional<std::int64_t> parse_remaining(std::string_view v);
// "1500", "1.5" (with `unit_ms` false: seconds) -> milliseconds; rejects negatives and junk.
std::optional<std::chrono::milliseconds> parse_number_delay(std::string_view v, bool unit_ms);
// Go-style durations "12ms", "20s", "6m0s", "2m59.56s", "1h"; a bare number is seconds.
std::optional<std::chrono::milliseconds> parse_duration_string(std::string_view v);
// RFC 3339 "2026-11-29T05:41:00Z", with fractional seconds or an offset ("+01:00").
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view v);
// IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" (also RFC 850 and asctime forms).
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view v);

}  // namespace smartlb::routing
