#include "smartlb/admin/pool_snapshot.hpp"

#include <chrono>

namespace smartlb::admin {
namespace {

// The member whose declared quota applies to `deployment` (a state key) of backend `m`: a rule's
// target on that backend that declares one and serves that deployment (renamed to it, or
// passing any name), else the backend's own member.
const routing::PoolMember& quota_member(const routing::PoolMember& m, std::string_view deployment,
                                        std::span<const routing::RoutingTable* const> rule_tables) {
  for (const routing::RoutingTable* t : rule_tables)
    for (const routing::PoolMember& r : t->members())
      if (r.id == m.id && r.has_quota() &&
          (r.deployment_override.empty() || r.deployment_override == deployment))
        return r;
  return m;
}

}  // namespace

PoolSnapshot snapshot_pool(const routing::RoutingTable& table, const routing::BackendStates& states,
                           std::span<const config::BackendConfig> backends,
                           std::span<const routing::RoutingTable* const> rule_tables) {
  PoolSnapshot p;
  p.now = states.clock().now();
  p.now_unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(states.clock().wall_now().time_since_epoch())
          .count();
  p.backends.resize(table.id_bound());
  for (auto& b : p.backends) b.present = false;
  for (std::size_t i = 0; i < table.size(); ++i) {
    PoolSnapshot::Backend b;
    const routing::PoolMember& m = table.member(i);
    b.name = m.name;
    b.priority = m.priority;
    b.weight = m.weight;
    b.deployment_override = m.deployment_override;
    if (i < backends.size()) {
      b.url_host = backends[i].url.host_header;
      b.tls = backends[i].url.tls;
    }
    b.cooldown = states.backend_cooldown(m.id);
    for (auto& [name, view] : states.deployment_cooldowns(m.id)) {
      const routing::PoolMember& q = quota_member(m, name, rule_tables);
      b.deployments.push_back({name, view, states.quota_usage(q, name), states.leases(q, name)});
    }
    if (m.has_quota()) {
      b.quota_tokens = m.tokens_per_window;
      b.quota_requests = m.requests_per_window;
      b.quota_window_ms = std::chrono::duration_cast<std::chrono::milliseconds>(m.quota_window).count();
    }
    b.admin = states.admin_scopes(m.id);
    b.websocket_sessions = states.websocket_sessions(m.id);
    p.backends[m.id.value] = std::move(b);
  }
  return p;
}

std::vector<std::uint32_t> present_ids(const PoolSnapshot& p) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t b = 0; b < p.backends.size(); ++b)
    if (p.backends[b].present) out.push_back(b);
  return out;
}

std::string_view backend_state(const routing::CooldownView& c, base::MonoNanos now) {
  if (!is_cooling(c, now)) return "available";
  switch (c.cause) {
    case routing::FailureCause::AuthRejected:
    case routing::FailureCause::Credential:  // no Entra ID token could be had
      return "auth_failed";
    case routing::FailureCause::ConnectFailed:
    case routing::FailureCause::TlsFailed:
      return "unreachable";
    default:
      return "cooling";
  }
}

std::int64_t cooldown_remaining_ms(const routing::CooldownView& c, base::MonoNanos now) {
  if (!is_cooling(c, now)) return 0;
  return (c.until - now + 999'999) / 1'000'000;
}

}  // namespace smartlb::admin
