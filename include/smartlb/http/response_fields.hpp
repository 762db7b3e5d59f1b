#pragma once
// What a proxy reads from a response's (or any message's) fields, over any list of fields with
// `size()` and `operator[]` giving `.name` and `.value` (http1::HeaderList on the request path):
// which names its Connection fields make hop-by-hop, the throttling and rate-limit headers, and
// whether a body is a plain event stream. Allocation-free: every answer is read this way.
#include <array>
#include <cstring>
#include <string_view>
#include <vector>

#include "smartlb/http/header_rules.hpp"
#include "smartlb/http/throttle_fields.hpp"

namespace smartlb::http {

// `name` equals `lower` (lower-case letters, digits and '-', same length) in any case, eight
// bytes at a time: OR-ing 0x20 lower-cases a letter and leaves '-' and digits as they are (a
// header name holds no control character that could alias them).
template <std::size_t N>
bool is_lower_name(std::string_view name, const char (&lower)[N]) {
  constexpr std::size_t n = N - 1;
  static_assert(n >= 8);
  if (name.size() != n) return false;
  std::uint64_t a, b;
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::memcpy(&a, name.data() + i, 8);
    std::memcpy(&b, lower + i, 8);
    if ((a | 0x2020202020202020ull) != b) return false;
  }
  std::memcpy(&a, name.data() + n - 8, 8);
  std::memcpy(&b, lower + n - 8, 8);
  return (a | 0x2020202020202020ull) == b;
}

// The names a message's Connection fields list: hop-by-hop for that message, like the fixed
// ones. Collected once per message; the fixed hop-by-hop names ("keep-alive", the usual one) are
// not kept, so most messages list none and is_hop asks nothing more.
class ConnectionNames {
 public:
  template <class Fields>
  explicit ConnectionNames(const Fields& f) {
    for (std::size_t i = 0; i < f.size(); ++i) {
      const auto field = f[i];
      if (!base::iequals(field.name, "connection")) continue;
      for_each_list_token(field.value, [&](std::string_view token) {
        if (is_hop_by_hop(token)) return;  // hop-by-hop anyway
        if (count_ < names_.size())
          names_[count_++] = token;
        else
          more_.push_back(token);
      });
    }
  }
  // Whether the Connection fields list `name`, other than a fixed hop-by-hop one.
  bool contains(std::string_view name) const { return count_ > 0 && listed(name); }
  // Hop-by-hop for this message: a fixed hop-by-hop name, or one its Connection fields list.
  bool is_hop(std::string_view name) const { return is_hop_by_hop(name) || contains(name); }

 private:
  bool listed(std::string_view name) const;
  std::array<std::string_view, 8> names_;
  std::size_t count_ = 0;
  std::vector<std::string_view> more_;  // past the first 8 (rare)
};

// Every throttling and rate-limit header of a message, in one pass that compares names only
// where the length matches (on every answer: the reports route requests).
template <class Fields>
ThrottleHeaders throttle_fields(const Fields& f) {
  ThrottleHeaders h;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto field = f[i];
    switch (field.name.size()) {
      case 11:
        if (base::iequals(field.name, "retry-after")) h.retry_after = field.value;
        break;
      case 14:
        if (is_lower_name(field.name, "retry-after-ms")) h.retry_after_ms = field.value;
        break;
      case 19:
        if (is_lower_name(field.name, "x-ms-retry-after-ms")) h.x_ms_retry_after_ms = field.value;
        break;
      case 24:
        if (is_lower_name(field.name, "x-ratelimit-reset-tokens")) h.reset_tokens = field.value;
        break;
      case 25:
        if (h.reset_tokens.empty() && is_lower_name(field.name, "x-rate-limit-reset-tokens"))
          h.reset_tokens = field.value;
        break;
      case 26:
        if (is_lower_name(field.name, "x-ratelimit-reset-requests")) h.reset_requests = field.value;
        break;
      case 28:
        if (is_lower_name(field.name, "x-ratelimit-remaining-tokens")) h.remaining_tokens = field.value;
        break;
      case 30:
        if (is_lower_name(field.name, "x-ratelimit-remaining-requests")) h.remaining_requests = field.value;
        break;
      case 32:
        if (base::iequals(field.name, "anthropic-ratelimit-tokens-reset"))
          h.anthropic_tokens_reset = field.value;
        break;
      case 34:
        if (base::iequals(field.name, "anthropic-ratelimit-requests-reset"))
          h.anthropic_requests_reset = field.value;
        break;
      case 36:
        if (base::iequals(field.name, "anthropic-ratelimit-tokens-remaining"))
          h.anthropic_tokens_remaining = field.value;
        break;
      case 38:
        if (base::iequals(field.name, "anthropic-ratelimit-requests-remaining"))
          h.anthropic_requests_remaining = field.value;
        else if (base::iequals(field.name, "anthropic-ratelimit-input-tokens-reset"))
          h.anthropic_input_tokens_reset = field.value;
        break;
      case 42:
        if (base::iequals(field.name, "anthropic-ratelimit-input-tokens-remaining"))
          h.anthropic_input_tokens_remaining = field.value;
        break;
      default:
        break;
    }
  }
  return h;
}

// A plainly encoded event stream (`text/event-stream`, no content coding but identity): its
// start can be held back and read.
bool is_plain_event_stream(std::string_view content_type, std::string_view content_encoding);

}  // namespace smartlb::http
