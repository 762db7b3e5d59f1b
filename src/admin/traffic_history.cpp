#include "smartlb/admin/traffic_history.hpp"

#include <algorithm>
#include <cmath>

namespace smartlb::admin {

TrafficHistory::Totals TrafficHistory::totals(const telemetry::MetricsSnapshot& m, double unix_time) {
  Totals t;
  t.unix_time = unix_time;
  for (const auto& [key, value] : m.counters) {
    if (key.kind == telemetry::CounterKind::Requests) t.requests += value;
    if (key.kind == telemetry::CounterKind::ClientThrottled) t.throttled += value;
    if (key.kind == telemetry::CounterKind::Failovers) t.failovers += value;
  }
  t.served.reserve(m.backends.size());
  for (const telemetry::BackendMetrics& b : m.backends) {
    t.served.push_back(b.served);
    t.served_count += b.duration.count;
    t.served_seconds += b.duration.sum;
  }
  return t;
}

void TrafficHistory::add(const telemetry::MetricsSnapshot& m, double unix_time) {
  Totals now = totals(m, unix_time);
  if (last_ && now.unix_time > last_->unix_time) {
    const Totals& was = *last_;
    const auto delta = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
    TrafficSample s;
    s.unix_time = now.unix_time;
    s.seconds = now.unix_time - was.unix_time;
    s.requests = delta(now.requests, was.requests);
    s.throttled = delta(now.throttled, was.throttled);
    s.failovers = delta(now.failovers, was.failovers);
    const std::uint64_t served = delta(now.served_count, was.served_count);
    if (served > 0)
      s.latency_ms = (now.served_seconds - was.served_seconds) * 1000.0 / static_cast<double>(served);
    s.served.resize(now.served.size());
    for (std::size_t i = 0; i < now.served.size(); ++i)
      s.served[i] = delta(now.served[i], i < was.served.size() ? was.served[i] : 0);
    samples_.push_back(std::move(s));
    while (samples_.size() > capacity_) samples_.pop_front();
  }
  last_ = std::move(now);
}

nlohmann::json TrafficHistory::to_json(double interval_seconds,
                                       const std::vector<std::string>& backend_names) const {
  const auto rate = [](std::uint64_t n, double seconds) {
    return seconds > 0 ? std::round(static_cast<double>(n) / seconds * 100) / 100 : 0.0;
  };
  nlohmann::json samples = nlohmann::json::array();
  for (const TrafficSample& s : samples_) {
    nlohmann::json served = nlohmann::json::object();
    for (std::size_t i = 0; i < s.served.size() && i < backend_names.size(); ++i)
      if (s.served[i] > 0) served[backend_names[i]] = s.served[i];
    samples.push_back({{"t", std::round(s.unix_time * 1000) / 1000},
                       {"requests_per_s", rate(s.requests, s.seconds)},
                       {"throttled_per_s", rate(s.throttled, s.seconds)},
                       {"failovers_per_s", rate(s.failovers, s.seconds)},
                       {"latency_ms", std::round(s.latency_ms * 10) / 10},
                       {"served", std::move(served)}});
  }
  return {{"interval_seconds", interval_seconds}, {"samples", std::move(samples)}};
}

}  // namespace smartlb::admin
