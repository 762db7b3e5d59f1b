#pragma once
// Maps a request target (path + query) to what the simulator serves. Pure string work.

#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

enum class Endpoint { Api, SimFaults, SimStats, SimReset, NotFound };
enum class ApiStyle { Azure, OpenAI };
enum class Operation { ChatCompletions, Completions, Embeddings };

struct Route {
  Endpoint endpoint = Endpoint::NotFound;
  ApiStyle style = ApiStyle::OpenAI;
  Operation operation = Operation::ChatCompletions;
  /// Azure routes: the {deployment} path segment. OpenAI routes: empty (it is the body's model).
  std::string deployment;
  /// Value of the `api-version` query parameter, if present.
  std::optional<std::string> api_version;
};

/// Azure: /openai/deployments/{d}/chat/completions | completions | embeddings
/// OpenAI: /v1/chat/completions | /v1/completions | /v1/embeddings
/// Control: /_sim/faults, /_sim/stats, /_sim/reset
Route parse_route(std::string_view target);

/// Value of `key` in a query string ("a=1&b=2"), percent-decoded; nullopt if absent.
std::optional<std::string> query_parameter(std::string_view query, std::string_view key);

/// Azure operation name used in 429 messages, e.g. "ChatCompletions_Create".
std::string_view operation_name(Operation operation);

}  // namespace smartlb::sim
