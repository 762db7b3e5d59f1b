#pragma once
// What the admin endpoints read of the pool at one instant: the backends and their cooldowns,
// declared quotas and credentials, the rules and their targets, the client budgets, Redis. Built
// by snapshot_pool (and the admin listener) beside the metrics snapshot; both /status and
// /metrics are pure functions of the two. API keys never enter a snapshot.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smartlb/config/config.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/routing_table.hpp"

namespace smartlb::admin {

// A rule of the configuration as /status shows it, with its targets' state.
struct RuleStatus {
  struct Target {
    std::string id;
    std::string backend;
    std::string upstream_name;  // "" when the client's name passes through
    int priority = 1;
    std::uint32_t weight = 1;
    std::string state = "available";  // of (backend, deployment) when fixed, else the backend's
    std::int64_t cooldown_remaining_ms = 0;
    double latency_ms_per_token = 0;  // latency rules: the mean over the rule's lookback
    std::uint32_t latency_samples = 0;
  };
  std::string id;
  config::RuleType type = config::RuleType::Priority;
  bool implicit = false;
  std::vector<std::string> subjects, models;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<Target> targets;
};

// A client budget as /status shows it (used against limits, now).
struct BudgetStatus {
  std::string owner;      // "client", "subject", or "subject-caller" (a subject's budget for one caller)
  std::string name;       // the client's name, or the subject
  std::string principal;  // subject-caller: the caller
  config::ClientLimits limits;
  std::int64_t tokens_minute = 0, requests_minute = 0, tokens_day = 0, tokens_month = 0;  // used
  cost::PicoUnits cost_day = 0, cost_month = 0;                                           // used
  std::int64_t in_flight = 0;               // requests being answered now (max_in_flight), on this replica
  std::int64_t in_flight_all_replicas = 0;  // on every replica, as this one knows (Redis), else in_flight
};

struct PoolSnapshot {
  struct Deployment {
    std::string name;
    routing::CooldownView cooldown;
    routing::BackendStates::QuotaUsage quota;  // used / limit in the current window (limits 0: none declared)
    routing::BackendStates::Leases lease;      // shared quotas (REDIS_URL) only
  };
  struct Backend {
    std::string name;
    std::string url_host;  // host[:port] (no scheme, path or credentials)
    bool tls = true;
    int priority = 1;
    std::uint32_t weight = 1;
    std::string deployment_override;
    routing::CooldownView cooldown;       // the whole backend
    std::vector<Deployment> deployments;  // deployments with cooldown or quota state
    std::int64_t quota_tokens = 0;        // declared per deployment and window (0: none)
    std::int64_t quota_requests = 0;
    std::int64_t quota_window_ms = 0;
    std::int64_t websocket_sessions = 0;  // Realtime WebSocket sessions open on it now
    // `auth: entra`: its credential as /status shows it (never the token).
    struct Credential {
      std::string source;                // client-secret, workload-identity, app-service, imds
      std::string name;                  // source, identity and scope
      std::string state;                 // starting, valid, refreshing, failing, unavailable
      std::int64_t expires_at_unix = 0;  // the current token's expiry (0: none)
      std::string last_error;            // of the last failed refresh, while failures last
    };
    std::optional<Credential> credential;
    // Its health probe (HEALTH_PROBE_SECONDS), as the prober last found it.
    struct Health {
      std::string state;     // off, pending, up, down
      unsigned status = 0;   // the last answer's (0: none)
      std::string detail{};  // why it is down
      std::int64_t last_unix_ms = 0;
      std::string by{};                // the replica that probed ("": this one)
      std::uint64_t probes_sent = 0;   // by this replica
      std::uint64_t results_read = 0;  // other replicas' results applied here
    };
    Health health{"off"};
    bool present = true;  // false: an id no longer in the configuration (removed by a reload)
    // What operators set on it (the admin API): the scopes out of rotation or held now, the
    // backend's first, then its deployments'.
    std::vector<routing::BackendStates::AdminView> admin;
  };
  std::vector<Backend> backends;  // by BackendId (value)
  base::MonoNanos now = 0;
  std::int64_t now_unix_ms = 0;  // the same instant on the wall clock (who set what, when)
  base::MonoNanos started = 0;   // process start, for uptime (0: unknown)
  bool ready = true;
  bool draining = false;
  std::string config_hash;  // SHA-256 of the config file ("" with the environment only)
  std::vector<RuleStatus> rules;
  std::vector<BudgetStatus> budgets;
  std::string currency;                     // the prices' (budgets' cost limits are in it); "" without prices
  std::optional<redis::RedisStatus> redis;  // with REDIS_URL: the connection and the live replicas
};

// Reads the backends' state at `states.clock().now()`. Takes names and hosts from `backends`
// (by table position), never keys. The result is indexed by BackendId, like the metrics. A
// deployment's declared quota is its target's (`rule_tables`: model_configs' usage_limits, a
// target's rename) when one declares it, else its backend's.
PoolSnapshot snapshot_pool(const routing::RoutingTable& table, const routing::BackendStates& states,
                           std::span<const config::BackendConfig> backends,
                           std::span<const routing::RoutingTable* const> rule_tables = {});

// The ids of the backends in the current configuration, in order (PoolSnapshot::backends is by
// id, with gaps for backends a reload removed).
std::vector<std::uint32_t> present_ids(const PoolSnapshot& p);

// Whether a cooldown still runs at `now` (its deadline is later).
inline bool is_cooling(const routing::CooldownView& cooldown, base::MonoNanos now) {
  return cooldown.until > now;
}
// "available", "cooling", "unreachable" or "auth_failed" for a backend-wide cooldown at `now`.
std::string_view backend_state(const routing::CooldownView& cooldown, base::MonoNanos now);
// Milliseconds left (rounded up), 0 when not cooling.
std::int64_t cooldown_remaining_ms(const routing::CooldownView& cooldown, base::MonoNanos now);

}  // namespace smartlb::admin
