#pragma once
// The simulator's behaviour, without sockets: routes a SimRequest, applies auth, faults and
// quotas, counts it, and returns a SimResponse plan (status, headers, body or SSE events,
// delays, reset) for the server to carry out. Serves the OpenAI / Azure OpenAI APIs, Anthropic's
// Messages API (sim_engine_messages.cpp) and health probes' models lists. Thread-safe.

#include "smartlb/sim/api_request.hpp"
#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/deployment_quota.hpp"
#include "smartlb/sim/object_ids.hpp"
#include "smartlb/sim/realtime_session.hpp"
#include "smartlb/sim/sim_exchange.hpp"
#include "smartlb/sim/sim_settings.hpp"
#include "smartlb/sim/sim_stats.hpp"
#include "smartlb/sim/stateful_api.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace smartlb::sim {

/// The engine's verdict on a realtime WebSocket handshake.
struct RealtimeAdmission {
  std::optional<SimResponse> refusal;  // set: answer this instead of upgrading
  std::string deployment;
  std::string subprotocol;  // to name in Sec-WebSocket-Protocol; empty = none
  bool echo = false;        // --realtime-echo: answer each message with the same bytes
};

class SimEngine {
 public:
  /// `random01` returns uniform draws in [0, 1) for the faults (error_rate, reset_rate) and the
  /// report noise, in that order within a request; default: a seeded mt19937.
  SimEngine(SimSettings settings, const Clock& clock, std::function<double()> random01 = {});

  SimResponse handle(const SimRequest& request);

  /// A GET on a realtime route: the checks of any API request (upgrade, api-version, key from
  /// the api-key header or query parameter, a bearer token or the openai-insecure-api-key.<key>
  /// subprotocol; the deployment; faults; one request of quota), counted in the stats.
  RealtimeAdmission admit_realtime(const SimRequest& request);
  /// The session of an admitted handshake; counted open until realtime_closed().
  RealtimeSession open_realtime(const RealtimeAdmission& admission);
  /// Counts a session's messages both ways and the tokens its responses served.
  void record_realtime(const std::string& deployment, std::int64_t from_client, std::int64_t to_client,
                       std::int64_t tokens_served);
  void realtime_closed();

  /// A GET upgrade of /v1/responses (the Responses API's WebSocket mode): nullopt to accept,
  /// else the answer that refuses it (the key as for realtime, faults; no quota: each
  /// response.create is charged as the POST it stands for).
  std::optional<SimResponse> admit_responses_socket(const SimRequest& request);

  /// An API answer being written, from its plan to its last byte (the server calls both): the
  /// stats' "answers_in_flight" and its peak since the last reset (what a concurrency cap in
  /// front of the sim let through at once).
  void answer_began();
  void answer_ended();

  nlohmann::json stats_json() const;
  FaultConfig faults() const;
  const SimSettings& settings() const { return settings_; }

 private:
  struct Deployment {
    DeploymentQuota quota;
    std::chrono::milliseconds reasoning_wait{0};  // --reasoning-deployment
  };

  SimResponse handle_api(const Route& route, const SimRequest& request, std::string& deployment);
  /// Anthropic's Messages API (create, count_tokens): its checks, errors and headers.
  SimResponse handle_messages(const Route& route, const SimRequest& request, std::string& deployment);
  /// An injected fault of a Messages request, in Anthropic's shape, or nullopt.
  std::optional<SimResponse> injected_messages_fault(Deployment& state);
  /// anthropic-ratelimit-* of `state` (through the report noise) and the deployment's resets.
  void add_anthropic_quota_headers(SimResponse& response, Deployment& deployment, const QuotaState& state);
  /// GET .../models from a health probe: no key check, counted apart; sees a dead backend's
  /// faults (a forced 5xx, a stall before the headers), not a forced 429.
  SimResponse handle_probe(const Route& route, const SimRequest& request);
  SimResponse handle_stateful(const Route& route, const SimRequest& request, std::string& deployment);
  RealtimeAdmission admit_realtime_locked(const Route& route, const SimRequest& request);
  /// The key of a WebSocket handshake: a header, or the browser's query parameter or subprotocol.
  bool websocket_authorized(const Route& route, const SimRequest& request) const;
  /// An injected fault for this request (force_status, error_rate), or nullopt.
  std::optional<SimResponse> injected_fault(std::string_view operation, const std::string& api_version,
                                            Deployment* state);
  /// Charges `cost` to the deployment; a 429 when it does not fit, else nullopt and `admitted`.
  std::optional<SimResponse> quota_refusal(Deployment& state, std::int64_t cost, std::string_view operation,
                                           const std::string& api_version, QuotaState& admitted);
  SimResponse handle_faults(const SimRequest& request);
  SimResponse handle_stats(const SimRequest& request);
  nlohmann::json stats_json_locked() const;
  SimResponse handle_reset(const SimRequest& request);
  SimResponse serve_success(const Route& route, const ApiRequest& api, const std::string& deployment,
                            const Deployment& state);
  /// The stall and reset faults of a successful answer (draws from random01_ for reset_rate).
  void plan_success_faults(SimResponse& response);
  /// The wait before a generated answer's first content (first-token faults and reasoning).
  std::chrono::milliseconds first_token_wait(std::int64_t prompt_tokens, const Deployment& state) const;
  bool authorized(const SimRequest& request) const;
  /// x-ratelimit-* of `state`, through the configured report noise (draws from random01_).
  void add_quota_headers(SimResponse& response, const QuotaState& state);

  SimSettings settings_;
  const Clock& clock_;
  std::function<double()> random01_;

  mutable std::mutex mutex_;
  std::int64_t answers_in_flight_ = 0, answers_in_flight_peak_ = 0;  // under mutex_
  std::map<std::string, Deployment> deployments_;
  FaultConfig faults_;
  SimStats stats_;
  std::int64_t next_id_ = 1;
  IdMinter ids_;
  StatefulApi stateful_;
  struct RealtimeCounters {
    std::int64_t sessions = 0;  // accepted handshakes
    std::int64_t open = 0;
    std::int64_t client_messages = 0;
    std::int64_t server_messages = 0;
  } realtime_;
};

}  // namespace smartlb::sim
