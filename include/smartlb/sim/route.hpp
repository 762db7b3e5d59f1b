#pragma once
// Maps a request target (path + query) to what the simulator serves. Pure string work.

#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

enum class Endpoint { Api, Stateful, Realtime, Messages, Models, SimFaults, SimStats, SimReset, NotFound };
enum class ApiStyle { Azure, OpenAI };
enum class Operation { ChatCompletions, Completions, Embeddings };
/// The collections of objects a sim keeps (Endpoint::Stateful).
enum class Collection { Responses, Files, Batches };

struct Route {
  Endpoint endpoint = Endpoint::NotFound;
  ApiStyle style = ApiStyle::OpenAI;
  Operation operation = Operation::ChatCompletions;
  /// Azure routes: the {deployment} path segment. OpenAI routes: empty (it is the body's model).
  /// Realtime: the `deployment` (Azure) or `model` (OpenAI style) query parameter.
  std::string deployment;
  /// Value of the `api-version` query parameter, if present.
  std::optional<std::string> api_version;

  /// Stateful routes: which collection, the object's id segment (empty for the collection
  /// itself) and the action segment after it ("cancel", "input_items", "content"; may be empty).
  /// Messages routes: action "count_tokens" for .../messages/count_tokens, else empty.
  Collection collection = Collection::Responses;
  std::string object_id;
  std::string action;
  /// The query string, without '?'.
  std::string query;
};

/// Prefixes: Azure deployment style /openai/deployments/{d}/..., Azure style /openai/...
/// (api-version required by the engine), OpenAI style /openai/v1/... and /v1/...
///   chat/completions | completions | embeddings   Api (Azure: only under deployments/{d})
///   responses[/{id}[/cancel|/input_items]]        Stateful (not under deployments/{d})
///   files[/{id}[/content]], batches[/{id}[/cancel]]
///   realtime                                      Realtime (not under deployments/{d})
///   models                                        Models: what health probes ask for (not
///                                                 under deployments/{d}; also /anthropic/v1/models)
/// Anthropic's Messages API, under /v1/ and /anthropic/v1/ (Microsoft Foundry's prefix) only:
///   messages[/count_tokens]                       Messages (the deployment is the body's model)
/// Control: /_sim/faults, /_sim/stats, /_sim/reset
Route parse_route(std::string_view target);

/// The collection's name in paths and messages: "responses", "files", "batches".
/// The Responses collection itself (/v1/responses, /openai/v1/responses, /openai/responses):
/// where the Responses API's WebSocket mode opens.
bool is_responses_socket_route(const Route& route);
std::string_view collection_name(Collection collection);

/// Value of `key` in a query string ("a=1&b=2"), percent-decoded; nullopt if absent.
std::optional<std::string> query_parameter(std::string_view query, std::string_view key);

/// Azure operation name used in 429 messages, e.g. "ChatCompletions_Create".
std::string_view operation_name(Operation operation);

}  // namespace smartlb::sim
