#pragma once
// Everything that configures the simulator's behaviour (not its sockets).

#include "smartlb/sim/deployment_spec.hpp"
#include "smartlb/sim/faults.hpp"
#include "smartlb/sim/limiter_settings.hpp"
#include "smartlb/sim/object_store.hpp"
#include "smartlb/sim/quota_report.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace smartlb::sim {

struct SimSettings {
  std::string name = "sim";                 // x-sim-name header, logs
  std::vector<DeploymentSpec> deployments;  // empty = {default_deployment()}
  std::string api_key;                      // empty = no key check
  int stream_chunks = 5;                    // 0 = derive from max_tokens
  std::chrono::milliseconds chunk_interval{0};
  LimiterSettings limiter;  // model and window of the quotas
  ReportNoise reports;      // jitter and -1 in the x-ratelimit-* reports
  std::int64_t default_max_tokens = 16;
  FaultConfig faults;          // at start and after POST /_sim/reset
  StoreLimits store_limits;    // each of the responses, files and batches stores
  bool realtime_echo = false;  // realtime sessions answer each message with the same bytes
  std::uint64_t id_seed = 0;   // of the object ids; 0 = a random seed
};

}  // namespace smartlb::sim
