#include "smartlb/redis/admin_message.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::redis {
namespace {

using nlohmann::json;

std::string dump(const json& j) {
  // Names and who-set-it texts come from configurations and tokens' names: never throw here.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool string_member(const json& j, const char* key, std::string& out) {
  if (!j.contains(key)) return true;
  if (!j[key].is_string()) return false;
  out = j[key].get<std::string>();
  return true;
}
bool integer_member(const json& j, const char* key, std::int64_t& out) {
  if (!j.contains(key)) return true;
  if (!j[key].is_number_integer()) return false;
  out = j[key].get<std::int64_t>();
  return true;
}

json stamp_json(const routing::AdminStamp& s) { return {{"by", s.by}, {"at", s.at_ms}}; }
std::optional<routing::AdminStamp> stamp_of(const json& j) {
  routing::AdminStamp s;
  if (!j.is_object() || !string_member(j, "by", s.by) || !integer_member(j, "at", s.at_ms))
    return std::nullopt;
  return s;
}

std::optional<routing::AdminChange::Kind> kind_named(std::string_view name) {
  for (auto k :
       {routing::AdminChange::Kind::Mode, routing::AdminChange::Kind::Hold, routing::AdminChange::Kind::Lift})
    if (to_string(k) == name) return k;
  return std::nullopt;
}

}  // namespace

std::string encode_change(const routing::AdminChange& c, std::string_view replica) {
  json j{{"r", replica}, {"b", c.backend}, {"k", to_string(c.kind)}, {"s", stamp_json(c.stamp)}};
  if (c.deployment) j["d"] = *c.deployment;
  if (c.kind == routing::AdminChange::Kind::Mode) j["m"] = to_string(c.mode);
  if (c.kind == routing::AdminChange::Kind::Hold) j["u"] = c.hold_until_ms;
  return dump(j);
}

std::optional<ReceivedChange> decode_change(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("b") || !j.contains("k") || !j["k"].is_string()) return std::nullopt;
  ReceivedChange r;
  routing::AdminChange& c = r.change;
  if (!string_member(j, "r", r.replica) || !string_member(j, "b", c.backend) || c.backend.empty())
    return std::nullopt;
  const auto kind = kind_named(j["k"].get<std::string>());
  if (!kind) return std::nullopt;
  c.kind = *kind;
  if (j.contains("d")) {
    std::string d;
    if (!string_member(j, "d", d) || d.empty()) return std::nullopt;
    c.deployment = std::move(d);
  }
  if (c.kind == routing::AdminChange::Kind::Mode) {
    const auto mode = j.contains("m") && j["m"].is_string()
                          ? routing::admin_mode_named(j["m"].get<std::string>())
                          : std::nullopt;
    if (!mode) return std::nullopt;
    c.mode = *mode;
  }
  if (!integer_member(j, "u", c.hold_until_ms) || c.hold_until_ms < 0) return std::nullopt;
  if (j.contains("s")) {
    const auto stamp = stamp_of(j["s"]);
    if (!stamp) return std::nullopt;
    c.stamp = *stamp;
  }
  return r;
}

std::string encode_settings(const routing::AdminSettings& s) {
  json j{{"m", to_string(s.mode)}, {"s", stamp_json(s.mode_set)}};
  if (s.hold) j["h"] = {{"u", s.hold->until_ms}, {"s", stamp_json(s.hold->set)}};
  return dump(j);
}

std::optional<routing::AdminSettings> decode_settings(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("m") || !j["m"].is_string()) return std::nullopt;
  routing::AdminSettings s;
  const auto mode = routing::admin_mode_named(j["m"].get<std::string>());
  if (!mode) return std::nullopt;
  s.mode = *mode;
  if (j.contains("s")) {
    const auto stamp = stamp_of(j["s"]);
    if (!stamp) return std::nullopt;
    s.mode_set = *stamp;
  }
  if (j.contains("h")) {
    const json& h = j["h"];
    routing::AdminHold hold;
    if (!h.is_object() || !integer_member(h, "u", hold.until_ms) || hold.until_ms < 0) return std::nullopt;
    if (h.contains("s")) {
      const auto stamp = stamp_of(h["s"]);
      if (!stamp) return std::nullopt;
      hold.set = *stamp;
    }
    s.hold = std::move(hold);
  }
  return s;
}

std::string admin_field(std::string_view backend, const std::optional<std::string>& deployment) {
  std::string f(backend);
  if (deployment) f += "/" + *deployment;
  return f;
}

AdminScope admin_scope_of(std::string_view field) {
  const std::size_t slash = field.find('/');
  if (slash == std::string_view::npos) return {std::string(field), std::nullopt};
  return {std::string(field.substr(0, slash)), std::string(field.substr(slash + 1))};
}

}  // namespace smartlb::redis
