#pragma once
// The stateful APIs of one simulated resource (Responses, Files, Batches) behind one entry:
// which methods a route takes, what a request names before it may run (its deployment and
// quota cost: only a Responses create names one), and running it on the stores. The engine
// puts its checks in between (api-version, key, faults, quota), as for chat. Pure; the
// engine locks.

#include "smartlb/sim/batches_store.hpp"
#include "smartlb/sim/files_store.hpp"
#include "smartlb/sim/responses_store.hpp"
#include "smartlb/sim/route.hpp"

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace smartlb::sim {

struct StatefulSettings {
  StoreLimits limits;  // per store: responses, files, batches
  GenerationSettings generation;
};

struct StatefulPlan {
  std::optional<SimResponse> answer;  // set: answer this at once (a bad body)
  std::string operation;              // for 429 messages, e.g. "Responses_Create"
  std::string deployment;             // the deployment it names (Responses create), else empty
  std::int64_t cost = 0;              // its quota cost (prompt estimate + max_output_tokens)
  std::optional<ResponsesCreate> create;
};

class StatefulApi {
 public:
  StatefulApi(const StatefulSettings& settings, IdMinter& ids, const Clock& clock);

  /// The methods `route` takes, e.g. "GET, DELETE".
  static std::string_view allowed_methods(const Route& route);

  /// What the request names, once it is known to be allowed and authorised.
  StatefulPlan plan(const Route& route, const SimRequest& request) const;
  /// Runs a planned request on the stores.
  StoreAnswer execute(const Route& route, const SimRequest& request, const StatefulPlan& plan);

  /// {"responses": {"objects", "bytes"}, "files": {...}, "batches": {"objects"}}
  nlohmann::json stats_json() const;

 private:
  GenerationSettings generation_;
  ResponsesStore responses_;
  FilesStore files_;
  BatchesStore batches_;
};

}  // namespace smartlb::sim
