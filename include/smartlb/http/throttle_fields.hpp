#pragma once
// The throttling and rate-limit headers of one message, by role, as their raw values (parsed
// by routing/throttle_headers). Plain data.
#include <string_view>

namespace smartlb::http {

struct ThrottleHeaders {
  std::string_view retry_after_ms;       // retry-after-ms
  std::string_view x_ms_retry_after_ms;  // x-ms-retry-after-ms
  std::string_view retry_after;          // Retry-After: delta-seconds or HTTP-date
  std::string_view reset_requests;       // x-ratelimit-reset-requests
  std::string_view reset_tokens;         // x-ratelimit-reset-tokens / x-rate-limit-reset-tokens
  std::string_view remaining_requests;   // x-ratelimit-remaining-requests
  std::string_view remaining_tokens;     // x-ratelimit-remaining-tokens
  // Anthropic's (Claude's Messages API, Microsoft Foundry's too): what remains of each limit, and
  // when it is whole again, an RFC 3339 time. anthropic-ratelimit-{requests,tokens,input-tokens}-*
  std::string_view anthropic_requests_remaining, anthropic_tokens_remaining, anthropic_input_tokens_remaining;
  std::string_view anthropic_requests_reset, anthropic_tokens_reset, anthropic_input_tokens_reset;
};

}  // namespace smartlb::http
