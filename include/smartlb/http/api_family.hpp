#pragma once
// Which API a request speaks, from its path alone: it decides which header a backend's
// credential goes in (`auth: auto`) and how a request and its answer are read.
#include <cstdint>
#include <string_view>

namespace smartlb::http {

enum class ApiFamily : std::uint8_t {
  OpenAI,     // /v1/... (OpenAI and OpenAI-compatible servers)
  Azure,      // /openai/... (Azure OpenAI, its v1 API included)
  Anthropic,  // Claude's Messages API: /anthropic/v1/messages... (Microsoft Foundry), /v1/messages...
};

constexpr bool path_starts_with_segment(std::string_view path, std::string_view prefix) {
  return path.substr(0, prefix.size()) == prefix &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

constexpr ApiFamily api_family(std::string_view path) {
  if (path_starts_with_segment(path, "/openai")) return ApiFamily::Azure;
  if (path_starts_with_segment(path, "/anthropic") || path_starts_with_segment(path, "/v1/messages"))
    return ApiFamily::Anthropic;
  return ApiFamily::OpenAI;
}

}  // namespace smartlb::http
