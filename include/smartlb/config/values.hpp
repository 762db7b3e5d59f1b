#pragma once
// Checks and spellings shared by the configuration's sources (environment and file), so that
// a backend means the same, and is refused for the same reasons, wherever it is declared.
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::config {

// A value for a message: quoted, control characters shown as '?', cut after 80 characters.
std::string quoted(std::string_view v);

// 1-64 characters of A-Z a-z 0-9 . _ - (backend and client names).
bool is_valid_name(std::string_view name);
// 1-128 characters of A-Z a-z 0-9 . _ - ~ (deployment and model names sent upstream).
bool is_valid_deployment_name(std::string_view name);
// 1-256 visible ASCII characters, no spaces (a backend's resource: a name or a URL).
bool is_valid_resource_name(std::string_view name);
// A health probe's path: starts with '/', at most 512 visible ASCII characters (a query allowed).
bool is_probe_path(std::string_view path);
// *.openai.azure.com and Azure's other OpenAI hosts.
bool is_azure_host(std::string host);
// An Entra ID tenant id as tokens carry it: a GUID (8-4-4-4-12 hex digits).
bool is_tenant_guid(std::string_view id);
// Why `url` cannot be fetched as an http(s) URL (authority host, discovery URL), or nullopt.
std::optional<std::string> http_url_problem(std::string_view url);
// Why a key cannot be sent in a header, or nullopt. Never quotes the key.
std::optional<std::string> api_key_problem(std::string_view key);

// The closest of `candidates` to `word` when it is a likely typo (a small edit distance), for
// "did you mean" hints; empty when none is close.
template <class Range>
std::string closest(std::string_view word, const Range& candidates);
std::size_t edit_distance(std::string_view a, std::string_view b);

template <class Range>
std::string closest(std::string_view word, const Range& candidates) {
  std::string best;
  std::size_t best_distance = word.size() <= 4 ? 2 : 3;  // at most this many edits
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, std::string_view(c));
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

}  // namespace smartlb::config
