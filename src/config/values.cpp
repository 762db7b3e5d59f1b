#include "smartlb/config/values.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "smartlb/http/header_rules.hpp"

namespace smartlb::config {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

}  // namespace

std::string quoted(std::string_view v) {
  std::string out = "\"";
  for (char c : v.substr(0, 80)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += '?';
    else
      out += c;
  }
  if (v.size() > 80) out += "...";
  return out + "\"";
}

bool is_valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), is_name_char);
}

bool is_valid_deployment_name(std::string_view name) {
  return !name.empty() && name.size() <= 128 &&
         std::all_of(name.begin(), name.end(), [](char c) { return is_name_char(c) || c == '~'; });
}

bool is_valid_resource_name(std::string_view name) {
  return !name.empty() && name.size() <= 256 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

bool is_probe_path(std::string_view path) {
  return !path.empty() && path.front() == '/' && path.size() <= 512 &&
         std::all_of(path.begin(), path.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

bool is_azure_host(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view suffix :
       {".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com", ".azure-api.net",
        ".openai.azure.us", ".cognitiveservices.azure.us", ".openai.azure.cn", ".cognitiveservices.azure.cn"})
    if (host.ends_with(suffix)) return true;
  return false;
}

std::optional<std::string> api_key_problem(std::string_view key) {
  if (key.empty()) return "is set but empty";
  if (!http::is_safe_header_value(key) ||
      std::any_of(key.begin(), key.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f || c == ' '; }))
    return "contains whitespace or a control character (a trailing newline from a secrets file?); value not "
           "shown";
  return std::nullopt;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Levenshtein, two rows; names are short.
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool is_tenant_guid(std::string_view id) {
  if (id.size() != 36) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? id[i] != '-' : !std::isxdigit(static_cast<unsigned char>(id[i]))) return false;
  }
  return true;
}

std::optional<std::string> http_url_problem(std::string_view url) {
  const bool https = url.rfind("https://", 0) == 0, http = url.rfind("http://", 0) == 0;
  if (!https && !http) return "must start with https:// (or http:// for a local test server)";
  if (url.size() == (https ? 8u : 7u)) return "names no host";
  for (const char c : url)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      return "must not contain spaces or control characters";
  return std::nullopt;
}

}  // namespace smartlb::config
