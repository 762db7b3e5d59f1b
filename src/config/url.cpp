#include "smartlb/config/url.hpp"

#include <charconv>
#include <string>

namespace smartlb::config {

UrlParseResult parse_backend_url(std::string_view text) {
  UrlParseResult r;
  BackendUrl u;
  std::string_view rest;
  if (text.substr(0, 8) == "https://") {
    u.tls = true;
    u.port = 443;
    rest = text.substr(8);
  } else if (text.substr(0, 7) == "http://") {
    u.tls = false;
    u.port = 80;
    rest = text.substr(7);
  } else {
    r.error = "must start with https:// or http://";
    return r;
  }
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      r.error = "must not contain spaces or control characters";
      return r;
    }
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    r.error = "must not contain a query or fragment";
    return r;
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    r.error = "must not contain credentials (user@host); use BACKEND_X_APIKEY";
    return r;
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      r.error = "has an unterminated IPv6 address";
      return r;
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        r.error = "has junk after the IPv6 address";
        return r;
      }
      port = after.substr(1);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    r.error = "has no host";
    return r;
  }
  bool explicit_port = false;
  if (!port.empty() || authority.find(':') != std::string_view::npos) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc{} || p != port.data() + port.size() || value == 0 || value > 65535) {
      r.error = "has an invalid port";
      return r;
    }
    u.port = static_cast<std::uint16_t>(value);
    explicit_port = true;
  }
  u.host = std::string(host);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  u.base_path = std::string(path);
  const bool ipv6 = host.find(':') != std::string_view::npos;
  u.host_header = ipv6 ? "[" + u.host + "]" : u.host;
  const bool default_port = (u.tls && u.port == 443) || (!u.tls && u.port == 80);
  if (explicit_port && !default_port) u.host_header += ":" + std::to_string(u.port);
  r.url = std::move(u);
  return r;
}

std::optional<std::string> doubled_prefix_warning(const BackendUrl& url, std::string_view setting,
                                                  bool azure_clients) {
  const std::string_view path = url.base_path;
  std::string_view drop, example;
  if (path.ends_with("/openai/v1")) {
    drop = "/openai/v1";
    example = "/openai/v1/chat/completions";
  } else if (path.ends_with("/v1")) {
    drop = "/v1";
    example = "/v1/chat/completions";
  } else if (azure_clients && path.ends_with("/openai")) {
    drop = "/openai";
    example = "/openai/deployments/gpt-4o/chat/completions";
  } else {
    return std::nullopt;
  }
  std::string w = "ends in " + std::string(drop) + ", which clients put on their paths themselves (" +
                  std::string(example) + " would go out as " + std::string(path) + std::string(example) +
                  "): drop " + std::string(drop) + " from " + std::string(setting) +
                  ": smartlb appends the client's path";
  if (drop == "/openai")
    w += " (keep it only if every client of this backend sends OpenAI-style /v1/... paths: they then reach "
         "Azure's v1 API)";
  return w;
}

}  // namespace smartlb::config
