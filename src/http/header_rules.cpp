#include "smartlb/http/header_rules.hpp"

#include <array>
#include <charconv>

#include "smartlb/base/text.hpp"

namespace smartlb::http {

namespace {
bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && base::iequals(s.substr(0, prefix.size()), prefix);
}
}  // namespace

bool is_hop_by_hop(std::string_view name) {
  // Called for every field of every message: dispatch on the length before comparing.
  switch (name.size()) {
    case 2:
      return base::iequals(name, "te");
    case 7:
      return base::iequals(name, "trailer") || base::iequals(name, "upgrade");
    case 10:
      return base::iequals(name, "connection") || base::iequals(name, "keep-alive");
    case 16:
      return base::iequals(name, "proxy-connection");
    case 17:
      return base::iequals(name, "transfer-encoding");
    case 18:
      return base::iequals(name, "proxy-authenticate");
    case 19:
      return base::iequals(name, "proxy-authorization");
    default:
      return false;
  }
}

bool is_proxy_header_tail(std::string_view name) {
  return base::iequals(name.substr(0, 5), "proxy") && (name.size() == 5 || name[5] == '-');
}

bool is_client_credential(std::string_view name) {
  // Called for every field of every request: dispatch on the length before comparing.
  switch (name.size()) {
    case 7:
      return base::iequals(name, "api-key");
    case 9:
      return base::iequals(name, "x-api-key");
    case 13:
      return base::iequals(name, "authorization");
    case 14:
      return base::iequals(name, "x-goog-api-key");
    case 25:
      return base::iequals(name, "ocp-apim-subscription-key");
    default:
      return false;
  }
}

bool is_backend_quota_header(std::string_view name) {
  return istarts_with(name, "x-ratelimit-") || istarts_with(name, "x-rate-limit-");
}

bool is_replaced_answer_field(std::string_view name) {
  // No fixed hop-by-hop name begins with "x-"; every name of the other kinds does.
  if (name.size() >= 12 && (name[0] == 'x' || name[0] == 'X') && name[1] == '-')
    return is_backend_quota_header(name) || base::iequals(name, "x-request-id") ||
           base::iequals(name, "x-smartlb-backend");
  return is_hop_by_hop(name);
}

std::vector<std::string_view> list_tokens(std::string_view value) {
  std::vector<std::string_view> out;
  for_each_list_token(value, [&](std::string_view token) { out.push_back(token); });
  return out;
}

bool is_safe_header_value(std::string_view value) {
  for (char c : value)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

std::string check_request_framing(const FramingInput& in) {
  if (in.version == 11 && in.host_count != 1)
    return in.host_count == 0 ? "missing Host header" : "more than one Host header";
  if (in.host_count > 1) return "more than one Host header";
  if (!in.transfer_encoding.empty()) {
    if (!in.content_length.empty()) return "both Transfer-Encoding and Content-Length are present";
    if (in.version == 10) return "Transfer-Encoding in an HTTP/1.0 request";
    // Exactly one coding, and it is `chunked`: anything else ("gzip, chunked",
    // "chunked, chunked", "xchunked") is a smuggling shape or something we would not decode.
    std::size_t codings = 0;
    bool only_chunked = true;
    for (auto v : in.transfer_encoding)
      for_each_list_token(v, [&](std::string_view token) {
        ++codings;
        if (!base::iequals(token, "chunked")) only_chunked = false;
      });
    if (codings != 1 || !only_chunked) return "unsupported Transfer-Encoding";
  }
  if (in.content_length.size() > 1) return "more than one Content-Length header";
  if (in.content_length.size() == 1) {
    const auto v = base::trim_ows(in.content_length.front());
    std::uint64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc{} || p != v.data() + v.size()) return "invalid Content-Length";
  }
  return {};
}

}  // namespace smartlb::http
