#pragma once
// A backend's base URL, split into what the forwarder needs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb {

struct BackendUrl {
  bool tls = true;   // https
  std::string host;  // without brackets for IPv6
  std::uint16_t port = 443;
  std::string base_path;    // "" or "/prefix" (never a trailing slash)
  std::string host_header;  // host[:port] as sent in `Host` (port only when not default)
};

// Parses "https://host[:port][/path]" or "http://...". Returns an error message on failure.
struct UrlParseResult {
  std::optional<BackendUrl> url;
  std::string error;
};
UrlParseResult parse_backend_url(std::string_view text);

}  // namespace smartlb
