#pragma once
// A backend's base URL, split into what the forwarder needs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::config {

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

// A base path that repeats the prefix clients put on their paths themselves: smartlb appends
// the client's path to the base path, so "https://api.openai.com/v1" sends /v1/chat/completions
// to /v1/v1/chat/completions. A base path ending in /v1 is always doubled; one ending in /openai
// only for Azure-style clients (/openai/deployments/...), which `azure_clients` says may reach
// the backend (OpenAI-style /v1/... paths behind /openai reach Azure's v1 API, /openai/v1/...).
// The warning names `setting` and the fix; nullopt when the path is fine.
std::optional<std::string> doubled_prefix_warning(const BackendUrl& url, std::string_view setting,
                                                  bool azure_clients);

}  // namespace smartlb::config
