#pragma once
// The throttling and rate-limit headers of one message, by role, as their raw values (parsed
// by routing/throttle_headers). Plain data.
#include <string_view>

namespace smartlb {

struct ThrottleHeaders {
  std::string_view retry_after_ms;       // retry-after-ms
  std::string_view x_ms_retry_after_ms;  // x-ms-retry-after-ms
  std::string_view retry_after;          // Retry-After: delta-seconds or HTTP-date
  std::string_view reset_requests;       // x-ratelimit-reset-requests
  std::string_view reset_tokens;         // x-ratelimit-reset-tokens / x-rate-limit-reset-tokens
  std::string_view remaining_requests;   // x-ratelimit-remaining-requests
  std::string_view remaining_tokens;     // x-ratelimit-remaining-tokens
};

}  // namespace smartlb
