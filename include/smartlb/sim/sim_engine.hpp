#pragma once
// The simulator's behaviour, without sockets: routes a SimRequest, applies auth, faults and
// quotas, counts it, and returns a SimResponse plan (status, headers, body or SSE events,
// delays, reset) for the server to carry out. Thread-safe.

#include "smartlb/sim/api_request.hpp"
#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/deployment_quota.hpp"
#include "smartlb/sim/sim_exchange.hpp"
#include "smartlb/sim/sim_settings.hpp"
#include "smartlb/sim/sim_stats.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace smartlb::sim {

class SimEngine {
 public:
  /// `random01` returns uniform draws in [0, 1) for the faults (error_rate, reset_rate) and the
  /// report noise, in that order within a request; default: a seeded mt19937.
  SimEngine(SimSettings settings, const Clock& clock, std::function<double()> random01 = {});

  SimResponse handle(const SimRequest& request);

  nlohmann::json stats_json() const;
  FaultConfig faults() const;
  const SimSettings& settings() const { return settings_; }

 private:
  struct Deployment {
    DeploymentQuota quota;
  };

  SimResponse handle_api(const Route& route, const SimRequest& request, std::string& deployment);
  SimResponse handle_faults(const SimRequest& request);
  SimResponse handle_stats(const SimRequest& request);
  nlohmann::json stats_json_locked() const;
  SimResponse handle_reset(const SimRequest& request);
  SimResponse serve_success(const Route& route, const ApiRequest& api, const std::string& deployment);
  bool authorized(const SimRequest& request) const;
  /// x-ratelimit-* of `state`, through the configured report noise (draws from random01_).
  void add_quota_headers(SimResponse& response, const QuotaState& state);

  SimSettings settings_;
  const Clock& clock_;
  std::function<double()> random01_;

  mutable std::mutex mutex_;
  std::map<std::string, Deployment> deployments_;
  FaultConfig faults_;
  SimStats stats_;
  std::int64_t next_id_ = 1;
};

}  // namespace smartlb::sim
