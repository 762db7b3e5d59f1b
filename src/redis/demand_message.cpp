#include "smartlb/redis/demand_message.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace smartlb::redis {

namespace {

// A rate read from another replica (or anyone with access to Redis): finite, not negative.
bool read_rate(const nlohmann::json& j, double& out) {
  if (!j.is_number()) return false;
  out = j.get<double>();
  return std::isfinite(out) && out >= 0 && out < 1e15;
}

bool read_target(const nlohmann::json& t, routing::BackendStates::TargetDemand& out) {
  if (!t.is_object()) return false;
  const auto b = t.find("b"), d = t.find("d"), l = t.find("l");
  if (b == t.end() || !b->is_string() || d == t.end() || !d->is_string() || l == t.end() || !l->is_array() ||
      l->size() > out.rates.size())
    return false;
  out.backend = b->get<std::string>();
  out.deployment = d->get<std::string>();
  for (std::size_t i = 0; i < l->size(); ++i) {
    const auto& pair = (*l)[i];
    if (!pair.is_array() || pair.size() != 2 || !read_rate(pair[0], out.rates[i].tokens_per_second) ||
        !read_rate(pair[1], out.rates[i].requests_per_second))
      return false;
  }
  return true;
}

}  // namespace

std::string encode(const DemandMessage& m) {
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& t : m.targets) {
    std::size_t levels = t.rates.size();  // trailing levels nobody sent are left out
    while (levels > 0 && t.rates[levels - 1].requests_per_second == 0) --levels;
    nlohmann::json l = nlohmann::json::array();
    for (std::size_t i = 0; i < levels; ++i)
      l.push_back({t.rates[i].tokens_per_second, t.rates[i].requests_per_second});
    targets.push_back({{"b", t.backend}, {"d", t.deployment}, {"l", std::move(l)}});
  }
  return nlohmann::json{{"r", m.replica}, {"t", std::move(targets)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<DemandMessage> decode_demand(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto r = j.find("r"), t = j.find("t");
  if (r == j.end() || !r->is_string() || t == j.end() || !t->is_array() || t->size() > kMaxDemandTargets)
    return std::nullopt;
  DemandMessage m;
  m.replica = r->get<std::string>();
  for (const auto& target : *t) {
    routing::BackendStates::TargetDemand d;
    if (!read_target(target, d)) return std::nullopt;
    m.targets.push_back(std::move(d));
  }
  return m;
}

}  // namespace smartlb::redis
