#pragma once
// What the simulator served, reported by GET /_sim/stats. Not thread-safe (the engine locks).

#include "smartlb/sim/sim_exchange.hpp"

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

class SimStats {
 public:
  static constexpr std::size_t kMaxRecordedBody = 1024 * 1024;

  /// Remembers method, target, headers and body (at most its first kMaxRecordedBody bytes) of
  /// the latest API request.
  void record_request(const SimRequest& request);
  /// Counts one answer; `deployment` is empty when the request matched no deployment.
  void record_status(int status, const std::string& deployment);
  /// Counts one health probe's answer (GET .../models): apart from the API requests.
  void record_probe(int status);
  /// Tokens of a successful answer: `served` = usage.total_tokens, `charged` = quota cost.
  void record_tokens(const std::string& deployment, std::int64_t served, std::int64_t charged);
  void clear();

  /// {"requests", "by_status", "tokens_served", "tokens_charged", "deployments": {name:
  ///  {"requests","by_status","tokens_served","tokens_charged"}}, "last_request_method",
  ///  "last_request_path", "last_request_headers" (lower-case names), "last_request_body",
  ///  "last_request_body_bytes" (its whole size), "probes", "probes_by_status"}
  nlohmann::json to_json() const;

  std::int64_t requests() const { return totals_.requests; }

 private:
  struct Counters {
    std::int64_t requests = 0;
    std::map<int, std::int64_t> by_status;
    std::int64_t tokens_served = 0;
    std::int64_t tokens_charged = 0;
  };
  static nlohmann::json counters_json(const Counters& counters);

  Counters totals_;
  std::int64_t probes_ = 0;
  std::map<int, std::int64_t> probes_by_status_;
  std::map<std::string, Counters> per_deployment_;
  std::string last_method_;
  std::string last_path_;
  nlohmann::json last_headers_ = nlohmann::json::object();
  std::string last_body_;
  std::size_t last_body_bytes_ = 0;
};

}  // namespace smartlb::sim
