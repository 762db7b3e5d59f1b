#pragma once
// The last minutes of traffic for the status page's charts: every interval, the metrics'
// totals are read and what changed since the previous read becomes one sample (requests, 429s
// to clients, failovers, mean latency, requests served per backend). A fixed ring: 15 minutes
// at the default 10 s. Plain C++: the admin thread feeds it, /status reads it.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::admin {

struct TrafficSample {
  double unix_time = 0;  // the end of the interval
  double seconds = 0;    // its length
  std::uint64_t requests = 0, throttled = 0, failovers = 0;
  double latency_ms = 0;              // mean duration of the requests served in it (0: none)
  std::vector<std::uint64_t> served;  // by backend id
};

class TrafficHistory {
 public:
  explicit TrafficHistory(std::size_t capacity = 90) : capacity_(capacity) {}

  // Reads the totals at `unix_time`; the first read only sets the baseline.
  void add(const telemetry::MetricsSnapshot& m, double unix_time);
  const std::deque<TrafficSample>& samples() const { return samples_; }

  // {"interval_seconds", "samples": [{"t", "requests_per_s", "throttled_per_s",
  // "failovers_per_s", "latency_ms", "served": {backend name: requests}}]}
  nlohmann::json to_json(double interval_seconds, const std::vector<std::string>& backend_names) const;

 private:
  struct Totals {
    double unix_time = 0;
    std::uint64_t requests = 0, throttled = 0, failovers = 0, served_count = 0;
    double served_seconds = 0;
    std::vector<std::uint64_t> served;
  };
  static Totals totals(const telemetry::MetricsSnapshot& m, double unix_time);

  std::size_t capacity_;
  std::optional<Totals> last_;
  std::deque<TrafficSample> samples_;
};

}  // namespace smartlb::admin
