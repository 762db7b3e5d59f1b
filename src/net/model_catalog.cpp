#include "smartlb/net/model_catalog.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace smartlb::net {
namespace {

// The model list's paths: OpenAI's, Azure's (and its v1 API's), Anthropic's through Foundry.
constexpr std::string_view kListPaths[] = {"/v1/models", "/openai/models", "/openai/v1/models",
                                           "/anthropic/v1/models"};

std::string rfc3339(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

nlohmann::json entry(std::string_view name, bool anthropic, std::int64_t created_unix) {
  if (anthropic)
    return {{"type", "model"}, {"id", name}, {"display_name", name}, {"created_at", rfc3339(created_unix)}};
  return {{"id", name}, {"object", "model"}, {"created", created_unix}, {"owned_by", "smartlb"}};
}

}  // namespace

std::optional<CatalogRequest> catalog_request(std::string_view method, std::string_view path,
                                              bool anthropic_version) {
  if (method != "GET") return std::nullopt;
  for (const std::string_view list : kListPaths) {
    if (path.substr(0, list.size()) != list) continue;
    const bool anthropic = anthropic_version || list == "/anthropic/v1/models";
    if (path.size() == list.size()) return CatalogRequest{anthropic, {}};
    if (path[list.size()] != '/' || path.size() == list.size() + 1) return std::nullopt;
    const std::string_view model = path.substr(list.size() + 1);
    if (model.find('/') != std::string_view::npos) return std::nullopt;
    return CatalogRequest{anthropic, model};
  }
  return std::nullopt;
}

std::vector<std::string_view> catalog_names(const Snapshot& snapshot, std::span<const std::string> subjects) {
  std::vector<std::string_view> names;
  for (const Rule& rule : snapshot.rules) {
    const auto& allowed = rule.when.subjects;
    if (!allowed.empty() && std::none_of(allowed.begin(), allowed.end(), [&](const std::string& s) {
          return std::find(subjects.begin(), subjects.end(), s) != subjects.end();
        }))
      continue;
    names.insert(names.end(), rule.catalog.begin(), rule.catalog.end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string catalog_json(std::span<const std::string_view> names, bool anthropic, std::int64_t created_unix) {
  nlohmann::json data = nlohmann::json::array();
  for (const std::string_view n : names) data.push_back(entry(n, anthropic, created_unix));
  if (!anthropic) return nlohmann::json{{"object", "list"}, {"data", std::move(data)}}.dump();
  return nlohmann::json{{"data", std::move(data)},
                        {"has_more", false},
                        {"first_id", names.empty() ? nlohmann::json(nullptr) : nlohmann::json(names.front())},
                        {"last_id", names.empty() ? nlohmann::json(nullptr) : nlohmann::json(names.back())}}
      .dump();
}

std::string catalog_entry_json(std::string_view name, bool anthropic, std::int64_t created_unix) {
  return entry(name, anthropic, created_unix).dump();
}

}  // namespace smartlb::net
