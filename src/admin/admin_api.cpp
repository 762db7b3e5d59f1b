#include "smartlb/admin/admin_api.hpp"

#include <cmath>
#include <ctime>
#include <map>

#include "smartlb/config/values.hpp"

namespace smartlb::admin {
namespace {

using nlohmann::json;

constexpr std::string_view kPrefix = "/admin/backends";

json error_body(std::string_view type, std::string message) {
  return {{"error", {{"type", type}, {"message", std::move(message)}}}};
}

AdminAnswer refuse(unsigned status, std::string_view type, std::string message) {
  return {status, error_body(type, std::move(message)), {}};
}

bool takes(std::string_view allow, std::string_view method) {
  while (!allow.empty()) {
    const std::size_t comma = allow.find(',');
    std::string_view m = allow.substr(0, comma);
    while (!m.empty() && m.front() == ' ') m.remove_prefix(1);
    if (m == method) return true;
    if (comma == std::string_view::npos) break;
    allow.remove_prefix(comma + 1);
  }
  return false;
}

// The query's deployment (none when absent), or the message of a 400.
struct Scope {
  std::optional<std::string> deployment;
  std::string problem;
};
Scope scope_of(std::string_view query) {
  Scope s;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (name != "deployment") {
      s.problem = "Unknown query parameter " + smartlb::config::quoted(name) +
                  "; the admin API takes deployment=NAME only.";
      return s;
    }
    if (s.deployment) {
      s.problem = "deployment is given twice.";
      return s;
    }
    // Deployment names are unreserved characters only: nothing to percent-decode.
    if (!config::is_valid_deployment_name(value)) {
      s.problem = "deployment must be 1-128 characters of A-Z a-z 0-9 . _ - ~, got " +
                  smartlb::config::quoted(value) + ".";
      return s;
    }
    s.deployment = std::string(value);
  }
  return s;
}

std::int64_t wall_ms(const routing::BackendStates& states) {
  return std::chrono::duration_cast<base::Millis>(states.clock().wall_now().time_since_epoch()).count();
}

// The body of a POST .../cooldown: nothing or {} (until lifted), or {"seconds": N}. The moment it
// ends (0: until lifted), or the message of a 400.
struct HoldAsked {
  std::int64_t until_ms = 0;
  std::string problem;
};
HoldAsked hold_of(std::string_view body, std::int64_t now_ms) {
  HoldAsked h;
  std::string_view trimmed = body;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())))
    trimmed.remove_prefix(1);
  if (trimmed.empty()) return h;
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    h.problem = R"(The body must be a JSON object: {"seconds": N}, or {} to hold until lifted.)";
    return h;
  }
  for (const auto& [key, value] : j.items())
    if (key != "seconds") {
      h.problem = "Unknown member " + smartlb::config::quoted(key) + R"(; the body takes "seconds" only.)";
      return h;
    }
  if (!j.contains("seconds") || j["seconds"].is_null()) return h;
  const json& s = j["seconds"];
  const double seconds = s.is_number() ? s.get<double>() : -1;
  if (!s.is_number() || !std::isfinite(seconds) || seconds <= 0 || seconds > kMaxHoldSeconds) {
    h.problem = "seconds must be a number above 0 and at most " + std::to_string(kMaxHoldSeconds) +
                " (a week); leave it out to hold until lifted.";
    return h;
  }
  h.until_ms = now_ms + std::max<std::int64_t>(1, std::llround(seconds * 1000));
  return h;
}

std::string where(std::string_view backend, const std::optional<std::string>& deployment) {
  std::string out = "backend " + std::string(backend);
  if (deployment) out += " deployment " + *deployment;
  return out;
}

json stamp_json(const routing::AdminStamp& s) {
  return {{"set_by", s.by.empty() ? json(nullptr) : json(s.by)},
          {"set_at", s.at_ms > 0 ? json(iso_utc(s.at_ms)) : json(nullptr)}};
}

AdminAnswer scope_answer(std::string_view backend, const std::optional<std::string>& deployment,
                         const routing::BackendStates& states, const AdminApiContext& context) {
  const auto view = states.admin_view(backend, deployment);
  if (!view) return refuse(404, "not_found", "No backend is named " + smartlb::config::quoted(backend) + ".");
  AdminAnswer a;
  a.body = admin_scope_json(backend, *view, wall_ms(states), states.clock().now());
  a.body["applies_to"] = context.shared ? "every replica" : "this replica";
  return a;
}

AdminAnswer backend_answer(std::string_view backend, const routing::BackendStates& states,
                           const AdminApiContext& context) {
  AdminAnswer a = scope_answer(backend, std::nullopt, states, context);
  if (a.status != 200) return a;
  // Its deployments an operator set, and those cooling on their own (a 429's), by name.
  std::map<std::string, json> deployments;
  const base::MonoNanos now = states.clock().now();
  if (const auto id = states.current_backend(backend)) {
    for (const auto& v : states.admin_scopes(*id))
      if (v.deployment) deployments[*v.deployment] = admin_scope_json(backend, v, wall_ms(states), now);
    for (const auto& [name, cooldown] : states.deployment_cooldowns(*id))
      if (cooldown.until > now && !deployments.contains(name))
        if (const auto v = states.admin_view(backend, name))
          deployments[name] = admin_scope_json(backend, *v, wall_ms(states), now);
  }
  json list = json::array();
  for (auto& [name, j] : deployments) list.push_back(std::move(j));
  a.body["deployments"] = std::move(list);
  return a;
}

AdminAnswer change(const AdminRoute& route, const AdminRequest& request,
                   const std::optional<AdminCaller>& caller, routing::BackendStates& states,
                   const AdminApiContext& context, const Scope& scope) {
  routing::AdminChange c;
  c.backend = std::string(route.backend);
  c.deployment = scope.deployment;
  c.stamp = {caller ? caller->describe() : std::string(), wall_ms(states)};
  std::string what;
  if (route.action == "cooldown") {
    if (request.method == "DELETE") {
      c.kind = routing::AdminChange::Kind::Lift;
      what = "cooldowns lifted";
    } else {
      const HoldAsked h = hold_of(request.body, c.stamp.at_ms);
      if (!h.problem.empty()) return refuse(400, "invalid_request_error", h.problem);
      c.kind = routing::AdminChange::Kind::Hold;
      c.hold_until_ms = h.until_ms;
      what = h.until_ms == 0 ? "cooldown held until lifted" : "cooldown held until " + iso_utc(h.until_ms);
    }
  } else {
    c.kind = routing::AdminChange::Kind::Mode;
    c.mode = route.action == "drain"     ? routing::AdminMode::Drain
             : route.action == "disable" ? routing::AdminMode::Disable
                                         : routing::AdminMode::Enabled;
    what = route.action == "drain" ? "drained" : route.action == "disable" ? "disabled" : "enabled";
  }
  if (!states.change_admin(c))
    return refuse(404, "not_found", "No backend is named " + smartlb::config::quoted(route.backend) + ".");
  AdminAnswer a = scope_answer(route.backend, scope.deployment, states, context);
  a.audit = where(route.backend, scope.deployment) + " " + what + " by " + c.stamp.by;
  return a;
}

}  // namespace

std::string iso_utc(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return std::string(text, n) + millis;
}

AdminRoute route_admin(std::string_view path) {
  AdminRoute r;
  if (path == "/admin/whoami") {
    r.kind = AdminRoute::Kind::Whoami;
    r.allow = "GET, HEAD";
    return r;
  }
  if (path == kPrefix || path == "/admin/backends/") {
    r.kind = AdminRoute::Kind::Backends;
    r.allow = "GET, HEAD";
    return r;
  }
  if (path.substr(0, kPrefix.size() + 1) != "/admin/backends/") return r;
  std::string_view rest = path.substr(kPrefix.size() + 1);
  const std::size_t slash = rest.find('/');
  r.backend = rest.substr(0, slash);
  if (r.backend.empty()) return r;
  if (slash == std::string_view::npos) {
    r.kind = AdminRoute::Kind::Backend;
    r.allow = "GET, HEAD";
    return r;
  }
  const std::string_view action = rest.substr(slash + 1);
  if (action != "drain" && action != "disable" && action != "enable" && action != "cooldown") return r;
  r.kind = AdminRoute::Kind::Action;
  r.need = AdminNeed::Write;
  r.action = action;
  r.allow = action == "cooldown" ? "POST, DELETE" : "POST";
  return r;
}

json admin_scope_json(std::string_view backend, const routing::BackendStates::AdminView& view,
                      std::int64_t now_ms, base::MonoNanos now) {
  const routing::AdminSettings& s = view.settings;
  json j;
  j["backend"] = backend;
  j["deployment"] = view.deployment ? json(*view.deployment) : json(nullptr);
  j["state"] = to_string(admin_phase(s, view.in_flight, now_ms));
  j["in_flight"] = view.in_flight;
  j["mode"] = to_string(s.mode);
  j.update(stamp_json(s.mode != routing::AdminMode::Enabled ? s.mode_set : routing::AdminStamp{}));
  if (s.holds_at(now_ms)) {
    json h = stamp_json(s.hold->set);
    h["until"] = s.hold->until_ms ? json(iso_utc(s.hold->until_ms)) : json(nullptr);
    h["remaining_ms"] = s.hold->until_ms ? json(s.hold->until_ms - now_ms) : json(nullptr);
    j["hold"] = std::move(h);
  } else {
    j["hold"] = nullptr;
  }
  const bool cooling = view.cooldown.until > now;
  j["cooldown_remaining_ms"] = cooling ? (view.cooldown.until - now + 999'999) / 1'000'000 : 0;
  j["cooldown_cause"] = cooling ? json(to_string(view.cooldown.cause)) : json(nullptr);
  return j;
}

AdminAnswer answer_admin(const AdminRoute& route, const AdminRequest& request,
                         const std::optional<AdminCaller>& caller, routing::BackendStates& states,
                         const AdminApiContext& context) {
  if (!takes(route.allow, request.method)) {
    AdminAnswer a =
        refuse(405, "method_not_allowed", "This endpoint takes " + std::string(route.allow) + ".");
    return a;
  }
  const Scope scope = scope_of(request.query);
  if (!scope.problem.empty()) return refuse(400, "invalid_request_error", scope.problem);
  switch (route.kind) {
    case AdminRoute::Kind::Whoami: {
      AdminAnswer a;
      if (caller)
        a.body = {{"name", caller->name},
                  {"role", caller->role == config::AdminRole::Write ? "write" : "read"},
                  {"fingerprint", caller->fingerprint}};
      else  // no tokens set: reading is open, writing is off
        a.body = {{"name", nullptr}, {"role", "read"}, {"fingerprint", nullptr}, {"tokens", false}};
      return a;
    }
    case AdminRoute::Kind::Backends: {
      AdminAnswer a;
      json list = json::array();
      for (const std::string& name : context.backends)
        if (AdminAnswer b = backend_answer(name, states, context); b.status == 200) {
          b.body.erase("applies_to");
          list.push_back(std::move(b.body));
        }
      a.body = {{"backends", std::move(list)},
                {"applies_to", context.shared ? "every replica" : "this replica"}};
      return a;
    }
    case AdminRoute::Kind::Backend:
      if (scope.deployment) return scope_answer(route.backend, scope.deployment, states, context);
      return backend_answer(route.backend, states, context);
    case AdminRoute::Kind::Action:
      return change(route, request, caller, states, context, scope);
    case AdminRoute::Kind::None:
      break;
  }
  return refuse(404, "not_found", "Not an admin API endpoint.");
}

}  // namespace smartlb::admin
