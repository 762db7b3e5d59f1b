#include "smartlb/redis/cooldown_message.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace smartlb::redis {

std::string encode(const CooldownMessage& m) {
  nlohmann::json j{{"b", m.backend}, {"c", std::string(to_string(m.cause))}, {"r", m.replica}};
  if (m.whole_backend)
    j["w"] = true;
  else
    j["d"] = m.deployment;
  // Names come from configurations and clients: never let a bad byte throw here.
  return std::to_string(m.until_ms) + " " + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<CooldownMessage> decode_cooldown(std::string_view text) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  CooldownMessage m;
  auto [p, ec] = std::from_chars(text.data(), text.data() + space, m.until_ms);
  if (ec != std::errc{} || p != text.data() + space) return std::nullopt;
  auto j = nlohmann::json::parse(text.substr(space + 1), nullptr, false);
  if (!j.is_object() || !j.contains("b") || !j["b"].is_string()) return std::nullopt;
  m.backend = j["b"].get<std::string>();
  // Written by other replicas (or anyone with access to Redis): every member's type is checked.
  if (j.contains("w")) {
    if (!j["w"].is_boolean()) return std::nullopt;
    m.whole_backend = j["w"].get<bool>();
  }
  if (!m.whole_backend) {
    if (!j.contains("d") || !j["d"].is_string()) return std::nullopt;
    m.deployment = j["d"].get<std::string>();
  }
  if (j.contains("c") && j["c"].is_string()) m.cause = failure_cause_named(j["c"].get<std::string>());
  if (j.contains("r") && j["r"].is_string()) m.replica = j["r"].get<std::string>();
  return m;
}

routing::FailureCause failure_cause_named(std::string_view name) {
  for (int c = 0; c <= static_cast<int>(routing::kLastFailureCause); ++c)
    if (to_string(static_cast<routing::FailureCause>(c)) == name)
      return static_cast<routing::FailureCause>(c);
  return routing::FailureCause::None;
}

}  // namespace smartlb::redis
