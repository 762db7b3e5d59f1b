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

  constexpr std::string_view kAzurePrefix = "/openai/deployments/";
  constexpr std::string_view kOpenAIPrefix = "/v1/";
  if (path.starts_with(kAzurePrefix)) {
    std::string_view rest = path.substr(kAzurePrefix.size());
    const auto slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return route;
    const std::string_view deployment = rest.substr(0, slash);
    if (!match_operation(rest.substr(slash + 1), route.operation)) return route;
    route.endpoint = Endpoint::Api;
    route.style = ApiStyle::Azure;
    route.deployment = percent_decode(deployment);
  } else if (path.starts_with(kOpenAIPrefix)) {
    if (!match_operation(path.substr(kOpenAIPrefix.size()), route.operation)) return route;
    route.endpoint = Endpoint::Api;
    route.style = ApiStyle::OpenAI;
  } else {
    return route;
  }
  route.api_version = query_parameter(query, "api-version");
  return route;
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
