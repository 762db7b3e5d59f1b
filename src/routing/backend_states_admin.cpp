// BackendStates: what operators set through the admin API (drain, disable, held cooldowns),
// and the attempts in flight a drain waits for. The request path reads one atomic per scope
// (AdminSlot); the settings themselves change on the admin or Redis thread, under the
// backend's admin_mutex.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "smartlb/routing/backend_states.hpp"

namespace smartlb::routing {
namespace {

std::int64_t wall_ms(const base::Clock& clock) {
  return std::chrono::duration_cast<base::Millis>(clock.wall_now().time_since_epoch()).count();
}

}  // namespace

base::MonoNanos BackendStates::admin_out(const PoolMember& m, const DeploymentState* d) const {
  base::MonoNanos out = state(m.id).admin.out_until.load(std::memory_order_relaxed);
  if (d != nullptr) out = std::max(out, d->admin.out_until.load(std::memory_order_relaxed));
  return out > clock_.now() ? out : 0;
}

base::MonoNanos BackendStates::cooldown_ended(const PoolMember& m, std::string_view deployment) const {
  base::MonoNanos at = recovery_at(m, deployment, nullptr);
  at = std::max(at, state(m.id).admin.back_at.load(std::memory_order_relaxed));
  if (const DeploymentState* d = find_deployment(m.id, m.effective_deployment(deployment)))
    at = std::max(at, d->admin.back_at.load(std::memory_order_relaxed));
  return at;
}

void BackendStates::set_slot(AdminSlot& slot, const AdminSettings& settings) const {
  const base::MonoNanos now = clock_.now();
  const base::MonoNanos next = admin_out_until(settings, now, wall_ms(clock_));
  const base::MonoNanos was = slot.out_until.load(std::memory_order_relaxed);
  // Slow start ramps from the moment it comes back: now, or when the held cooldown ends.
  if (next != kAdminForever) {
    if (next > now)
      slot.back_at.store(next, std::memory_order_relaxed);
    else if (was > now)
      slot.back_at.store(now, std::memory_order_relaxed);
  }
  slot.out_until.store(next, std::memory_order_relaxed);
}

void BackendStates::store_admin(const PoolMember& m, BackendState& s,
                                const std::optional<std::string>& deployment, const AdminSettings& settings,
                                bool lift) {
  const std::int64_t now_ms = wall_ms(clock_);
  if (!deployment) {
    s.admin_settings = settings;
    set_slot(s.admin, settings);
    if (lift) {
      s.backend.lift();
      std::shared_lock shape(s.mutex);
      for (auto& [name, d] : s.deployments) d->lift();
    }
    return;
  }
  DeploymentState& d = deployment_state(m, *deployment);
  if (settings.any(now_ms))
    s.deployment_admin.insert_or_assign(*deployment, settings);
  else
    s.deployment_admin.erase(*deployment);
  set_slot(d.admin, settings);
  if (lift) d.lift();
}

bool BackendStates::current_member(std::string_view backend, PoolMember& out) const {
  std::lock_guard lock(names_mutex_);
  auto it = by_name_.find(backend);
  if (it == by_name_.end() || !it->second.current) return false;
  out = it->second.member;
  return true;
}

std::optional<BackendId> BackendStates::current_backend(std::string_view backend) const {
  PoolMember m;
  if (!current_member(backend, m)) return std::nullopt;
  return m.id;
}

bool BackendStates::apply_remote_admin(const AdminChange& c) {
  PoolMember m;
  if (!current_member(c.backend, m)) return false;
  BackendState& s = state(m.id);
  std::lock_guard lock(s.admin_mutex);
  AdminSettings now = s.admin_settings;
  if (c.deployment) {
    auto it = s.deployment_admin.find(*c.deployment);
    now = it == s.deployment_admin.end() ? AdminSettings{} : it->second;
  }
  const bool lift = c.kind == AdminChange::Kind::Lift;
  store_admin(m, s, c.deployment, apply_change(std::move(now), c), lift);
  if (lift && !c.deployment) {  // the whole backend: its deployments' held cooldowns too
    std::vector<std::pair<std::string, AdminSettings>> held;
    for (const auto& [name, settings] : s.deployment_admin)
      if (settings.hold) held.emplace_back(name, apply_change(settings, c));
    for (const auto& [name, settings] : held) store_admin(m, s, name, settings, false);
  }
  return true;
}

bool BackendStates::change_admin(const AdminChange& c) {
  if (!apply_remote_admin(c)) return false;
  if (AdminListener* l = admin_listener_.load(std::memory_order_acquire)) l->on_admin_change(c);
  return true;
}

void BackendStates::replace_admin(const std::vector<AdminEntry>& entries) {
  std::vector<PoolMember> current;
  {
    std::lock_guard lock(names_mutex_);
    for (const auto& [name, named] : by_name_)
      if (named.current) current.push_back(named.member);
  }
  for (const PoolMember& m : current) {
    BackendState& s = state(m.id);
    std::lock_guard lock(s.admin_mutex);
    AdminSettings backend_settings;
    std::map<std::string, AdminSettings, std::less<>> deployments;
    for (const auto& [name, settings] : s.deployment_admin) deployments[name] = AdminSettings{};
    for (const AdminEntry& e : entries) {
      if (e.backend != m.name) continue;
      if (e.deployment)
        deployments[*e.deployment] = e.settings;
      else
        backend_settings = e.settings;
    }
    if (!(backend_settings == s.admin_settings)) store_admin(m, s, std::nullopt, backend_settings, false);
    for (const auto& [name, settings] : deployments) {
      auto it = s.deployment_admin.find(name);
      if (it != s.deployment_admin.end() && it->second == settings) continue;
      store_admin(m, s, name, settings, false);
    }
  }
}

std::optional<BackendStates::AdminView> BackendStates::admin_view(
    std::string_view backend, const std::optional<std::string>& deployment) const {
  PoolMember m;
  if (!current_member(backend, m)) return std::nullopt;
  const BackendState& s = state(m.id);
  AdminView v;
  v.deployment = deployment;
  std::lock_guard lock(s.admin_mutex);
  if (!deployment) {
    v.settings = s.admin_settings;
    v.in_flight = in_flight(m.id);
    v.cooldown = s.backend.view();
    return v;
  }
  if (auto it = s.deployment_admin.find(*deployment); it != s.deployment_admin.end()) v.settings = it->second;
  if (const DeploymentState* d = find_deployment(m.id, *deployment)) {
    v.in_flight = d->in_flight.load(std::memory_order_relaxed);
    v.cooldown = d->view();
  }
  return v;
}

std::vector<BackendStates::AdminView> BackendStates::admin_scopes(BackendId id) const {
  const BackendState& s = state(id);
  const std::int64_t now_ms = wall_ms(clock_);
  std::vector<AdminView> out;
  std::lock_guard lock(s.admin_mutex);
  if (s.admin_settings.any(now_ms))
    out.push_back({std::nullopt, s.admin_settings, in_flight(id), s.backend.view()});
  std::vector<AdminView> deployments;
  for (const auto& [name, settings] : s.deployment_admin) {
    if (!settings.any(now_ms)) continue;
    const DeploymentState* d = find_deployment(id, name);
    deployments.push_back({name, settings, d ? d->in_flight.load(std::memory_order_relaxed) : 0,
                           d ? d->view() : CooldownView{}});
  }
  std::sort(deployments.begin(), deployments.end(),
            [](const AdminView& a, const AdminView& b) { return *a.deployment < *b.deployment; });
  out.insert(out.end(), deployments.begin(), deployments.end());
  return out;
}

void BackendStates::forget_removed(const RoutingTable& current) {
  std::set<std::string, std::less<>> names;
  for (const PoolMember& m : current.members()) names.insert(m.name);
  std::vector<PoolMember> removed;
  {
    std::lock_guard lock(names_mutex_);
    for (auto& [name, named] : by_name_) {
      const bool now_current = names.count(name) > 0;
      if (named.current && !now_current) removed.push_back(named.member);
      named.current = now_current;
    }
  }
  for (const PoolMember& m : removed) {
    BackendState& s = state(m.id);
    std::lock_guard lock(s.admin_mutex);
    store_admin(m, s, std::nullopt, AdminSettings{}, false);
    std::vector<std::string> scoped;
    for (const auto& [name, settings] : s.deployment_admin) scoped.push_back(name);
    for (const std::string& name : scoped) store_admin(m, s, name, AdminSettings{}, false);
  }
}

InFlight BackendStates::begin_attempt(const PoolMember& m, std::string_view deployment) {
  return InFlight(&counted_state(m, m.effective_deployment(deployment)).in_flight);
}

InFlight BackendStates::begin_websocket_session(BackendId id) {
  return InFlight(&state(id).websocket_sessions);
}

std::int64_t BackendStates::websocket_sessions(BackendId id) const {
  return state(id).websocket_sessions.load(std::memory_order_relaxed);
}

std::int64_t BackendStates::in_flight(BackendId id) const {
  const BackendState& s = state(id);
  std::shared_lock lock(s.mutex);
  std::int64_t n = 0;
  for (const auto& [name, d] : s.deployments) n += d->in_flight.load(std::memory_order_relaxed);
  return n;
}

}  // namespace smartlb::routing
