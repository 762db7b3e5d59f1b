#include "smartlb/sim/route.hpp"

#include <array>
#include <utility>

namespace smartlb::sim {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i] == '+' ? ' ' : text[i]);
  }
  return out;
}

constexpr std::array<std::pair<std::string_view, Operation>, 3> kOperationSuffixes{{
    {"chat/completions", Operation::ChatCompletions},
    {"completions", Operation::Completions},
    {"embeddings", Operation::Embeddings},
}};

bool match_operation(std::string_view rest, Operation& operation) {
  for (const auto& [suffix, op] : kOperationSuffixes) {
    if (rest == suffix) {
      operation = op;
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> query_parameter(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const auto eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    if (percent_decode(name) == key) {
      return eq == std::string_view::npos ? std::string{} : percent_decode(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

namespace {

constexpr std::array<std::pair<std::string_view, Collection>, 3> kCollections{{
    {"responses", Collection::Responses},
    {"files", Collection::Files},
    {"batches", Collection::Batches},
}};

// The actions a collection's object has ("" = the object itself).
bool valid_action(Collection collection, std::string_view action) {
  if (action.empty()) return true;
  switch (collection) {
    case Collection::Responses:
      return action == "cancel" || action == "input_items";
    case Collection::Files:
      return action == "content";
    case Collection::Batches:
      return action == "cancel";
  }
  return false;
}

// `rest` is what follows the API prefix: "responses", "files/{id}", "batches/{id}/cancel".
bool match_stateful(std::string_view rest, Route& route) {
  std::string_view segments[3];
  std::size_t count = 0;
  while (!rest.empty()) {
    if (count == 3) return false;
    const auto slash = rest.find('/');
    segments[count++] = rest.substr(0, slash);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
    if (rest.empty()) return false;  // trailing slash
  }
  if (count == 0) return false;
  for (const auto& [name, collection] : kCollections) {
    if (segments[0] != name) continue;
    if (count >= 2 && segments[1].empty()) return false;
    route.collection = collection;
    route.object_id = count >= 2 ? percent_decode(segments[1]) : std::string{};
    route.action = count == 3 ? std::string(segments[2]) : std::string{};
    return valid_action(collection, route.action);
  }
  return false;
}

// Anthropic's Messages API: `rest` follows /v1/ or /anthropic/v1/.
bool match_messages(std::string_view rest, Route& route) {
  if (rest != "messages" && rest != "messages/count_tokens") return false;
  route.endpoint = Endpoint::Messages;
  route.style = ApiStyle::OpenAI;
  route.action = rest == "messages" ? "" : "count_tokens";
  return true;
}

}  // namespace

Route parse_route(std::string_view target) {
  Route route;
  const auto question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);

  if (path == "/_sim/faults") {
    route.endpoint = Endpoint::SimFaults;
    return route;
  }
  if (path == "/_sim/stats") {
    route.endpoint = Endpoint::SimStats;
    return route;
  }
  if (path == "/_sim/reset") {
    route.endpoint = Endpoint::SimReset;
    return route;
  }

  constexpr std::string_view kAzureDeploymentPrefix = "/openai/deployments/";
  constexpr std::string_view kAzureV1Prefix = "/openai/v1/";
  constexpr std::string_view kOpenAIPrefix = "/v1/";
  constexpr std::string_view kAzurePrefix = "/openai/";
  constexpr std::string_view kAnthropicPrefix = "/anthropic/v1/";
  route.query = std::string(query);
  route.api_version = query_parameter(query, "api-version");
  if (path.starts_with(kAnthropicPrefix)) {
    // Microsoft Foundry serves Claude here: the Messages API and the models list only.
    const std::string_view rest = path.substr(kAnthropicPrefix.size());
    if (rest == "models") {
      route.endpoint = Endpoint::Models;
      route.style = ApiStyle::OpenAI;
    } else {
      match_messages(rest, route);
    }
    return route;
  }
  if (path.starts_with(kAzureDeploymentPrefix)) {
    std::string_view rest = path.substr(kAzureDeploymentPrefix.size());
    const auto slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return route;
    const std::string_view deployment = rest.substr(0, slash);
    if (!match_operation(rest.substr(slash + 1), route.operation)) return route;
    route.endpoint = Endpoint::Api;
    route.style = ApiStyle::Azure;
    route.deployment = percent_decode(deployment);
    return route;
  }

  std::string_view rest;
  if (path.starts_with(kAzureV1Prefix)) {
    rest = path.substr(kAzureV1Prefix.size());
    route.style = ApiStyle::OpenAI;
  } else if (path.starts_with(kOpenAIPrefix)) {
    rest = path.substr(kOpenAIPrefix.size());
    route.style = ApiStyle::OpenAI;
  } else if (path.starts_with(kAzurePrefix)) {
    rest = path.substr(kAzurePrefix.size());
    route.style = ApiStyle::Azure;
  } else {
    return route;
  }

  if (rest == "models") {
    route.endpoint = Endpoint::Models;
  } else if (path.starts_with(kOpenAIPrefix) && match_messages(rest, route)) {
    // Anthropic's API shares OpenAI's /v1/ prefix.
  } else if (rest == "realtime") {
    route.endpoint = Endpoint::Realtime;
    route.deployment =
        query_parameter(query, route.style == ApiStyle::Azure ? "deployment" : "model").value_or("");
  } else if (route.style == ApiStyle::OpenAI && match_operation(rest, route.operation)) {
    route.endpoint = Endpoint::Api;
  } else if (match_stateful(rest, route)) {
    route.endpoint = Endpoint::Stateful;
  }
  return route;
}

bool is_responses_socket_route(const Route& route) {
  return route.endpoint == Endpoint::Stateful && route.collection == Collection::Responses &&
         route.object_id.empty() && route.action.empty();
}

std::string_view collection_name(Collection collection) {
  for (const auto& [name, value] : kCollections) {
    if (value == collection) return name;
  }
  return "unknown";
}

std::string_view operation_name(Operation operation) {
  switch (operation) {
    case Operation::ChatCompletions:
      return "ChatCompletions_Create";
    case Operation::Completions:
      return "Completions_Create";
    case Operation::Embeddings:
      return "Embeddings_Create";
  }
  return "Unknown";
}

}  // namespace smartlb::sim
