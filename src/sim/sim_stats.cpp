#include "smartlb/sim/sim_stats.hpp"

#include <algorithm>
#include <cctype>

namespace smartlb::sim {

void SimStats::record_request(const SimRequest& request) {
  last_method_ = request.method;
  last_path_ = request.target;
  // A large upload is not copied whole: its first kMaxRecordedBody bytes and its size.
  last_body_ = request.body.substr(0, kMaxRecordedBody);
  last_body_bytes_ = request.body.size();
  last_headers_ = nlohmann::json::object();
  for (const auto& [name, value] : request.headers) {
    std::string key = name;
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto& slot = last_headers_[key];
    slot = slot.is_string() ? nlohmann::json(slot.get<std::string>() + ", " + value) : nlohmann::json(value);
  }
}

void SimStats::record_status(int status, const std::string& deployment) {
  totals_.requests += 1;
  totals_.by_status[status] += 1;
  if (!deployment.empty()) {
    auto& counters = per_deployment_[deployment];
    counters.requests += 1;
    counters.by_status[status] += 1;
  }
}

void SimStats::record_probe(int status) {
  probes_ += 1;
  probes_by_status_[status] += 1;
}

void SimStats::record_tokens(const std::string& deployment, std::int64_t served, std::int64_t charged) {
  totals_.tokens_served += served;
  totals_.tokens_charged += charged;
  auto& counters = per_deployment_[deployment];
  counters.tokens_served += served;
  counters.tokens_charged += charged;
}

void SimStats::clear() { *this = SimStats{}; }

namespace {

nlohmann::json by_status_json(const std::map<int, std::int64_t>& by_status) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [status, count] : by_status) json[std::to_string(status)] = count;
  return json;
}

}  // namespace

nlohmann::json SimStats::counters_json(const Counters& counters) {
  return {{"requests", counters.requests},
          {"by_status", by_status_json(counters.by_status)},
          {"tokens_served", counters.tokens_served},
          {"tokens_charged", counters.tokens_charged}};
}

nlohmann::json SimStats::to_json() const {
  auto json = counters_json(totals_);
  nlohmann::json deployments = nlohmann::json::object();
  for (const auto& [name, counters] : per_deployment_) deployments[name] = counters_json(counters);
  json["deployments"] = std::move(deployments);
  json["last_request_method"] = last_method_;
  json["last_request_path"] = last_path_;
  json["last_request_headers"] = last_headers_;
  json["last_request_body"] = last_body_;
  json["last_request_body_bytes"] = last_body_bytes_;
  json["probes"] = probes_;
  json["probes_by_status"] = by_status_json(probes_by_status_);
  return json;
}

}  // namespace smartlb::sim
