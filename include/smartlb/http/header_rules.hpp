#pragma once
// Which headers a proxy must drop or may not pass along, and request-framing checks that
// close the smuggling shapes Beast accepts. Pure functions over names and values.
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/base/text.hpp"  // iequals

namespace smartlb::http {

// RFC 9110 hop-by-hop headers (plus the legacy Keep-Alive / Proxy-Connection).
bool is_hop_by_hop(std::string_view name);
// `Proxy` and every `Proxy-*` header (Proxy-Authorization too), any case. Not hop-by-hop by
// RFC, but no client of an OpenAI gateway has a reason to send one, and a backend that reads
// `Proxy` into HTTP_PROXY would send its own traffic there (httpoxy): never forwarded.
// Called for every field of every request: the length and first letter, inline, decide most.
bool is_proxy_header_tail(std::string_view name);  // the rest, for names that may be one
inline bool is_proxy_header(std::string_view name) {
  return name.size() >= 5 && (name[0] == 'p' || name[0] == 'P') && is_proxy_header_tail(name);
}
// A header that carries a credential in this field, any case: `api-key` (Azure),
// `Authorization`, `x-api-key` (Anthropic), `Ocp-Apim-Subscription-Key` (API Management),
// `x-goog-api-key` (Gemini). A client's never goes upstream as it came: the backend's own
// credential replaces it (or, for a backend without one, it passes by the pass-through rule).
bool is_client_credential(std::string_view name);
// Per-backend quota headers: they describe one backend, not the pool.
bool is_backend_quota_header(std::string_view name);
// A backend's answer field that never reaches the client as the backend wrote it: a fixed
// hop-by-hop one, a per-backend quota header, or one smartlb writes itself (x-smartlb-backend,
// x-request-id). One dispatch for every field of every answer (not the names a Connection
// field lists: see ConnectionNames).
bool is_replaced_answer_field(std::string_view name);
// Calls `on(token)` for each element of a comma-separated header value (Connection,
// Transfer-Encoding), trimmed of spaces and tabs, empty elements skipped. Allocates nothing:
// the request path splits every message's Connection value.
template <class On>
void for_each_list_token(std::string_view value, On&& on) {
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view t = value.substr(0, comma);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (!t.empty()) on(t);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}
// The same tokens, collected.
std::vector<std::string_view> list_tokens(std::string_view value);
// No CR, LF or NUL: safe to emit as a header value.
bool is_safe_header_value(std::string_view value);

// What the request head says about its body framing.
struct FramingInput {
  std::vector<std::string_view> transfer_encoding;  // every Transfer-Encoding field value
  std::vector<std::string_view> content_length;     // every Content-Length field value
  std::size_t host_count = 0;
  unsigned version = 11;  // 10 or 11
};
// "" when acceptable, else the reason for a 400.
std::string check_request_framing(const FramingInput& in);

}  // namespace smartlb::http
