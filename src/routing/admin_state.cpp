#include "smartlb/routing/admin_state.hpp"

#include <algorithm>

namespace smartlb::routing {

std::string_view to_string(AdminMode m) {
  switch (m) {
    case AdminMode::Drain:
      return "drain";
    case AdminMode::Disable:
      return "disable";
    case AdminMode::Enabled:
      break;
  }
  return "enabled";
}

std::optional<AdminMode> admin_mode_named(std::string_view name) {
  for (AdminMode m : {AdminMode::Enabled, AdminMode::Drain, AdminMode::Disable})
    if (to_string(m) == name) return m;
  return std::nullopt;
}

std::string_view to_string(AdminChange::Kind k) {
  switch (k) {
    case AdminChange::Kind::Hold:
      return "hold";
    case AdminChange::Kind::Lift:
      return "lift";
    case AdminChange::Kind::Mode:
      break;
  }
  return "mode";
}

AdminSettings apply_change(AdminSettings s, const AdminChange& c) {
  switch (c.kind) {
    case AdminChange::Kind::Mode:
      s.mode = c.mode;
      s.mode_set = c.stamp;
      break;
    case AdminChange::Kind::Hold:
      s.hold = AdminHold{c.hold_until_ms, c.stamp};
      break;
    case AdminChange::Kind::Lift:
      s.hold.reset();
      break;
  }
  return s;
}

std::string_view to_string(AdminPhase p) {
  switch (p) {
    case AdminPhase::Draining:
      return "draining";
    case AdminPhase::Drained:
      return "drained";
    case AdminPhase::Disabled:
      return "disabled";
    case AdminPhase::Held:
      return "held";
    case AdminPhase::Enabled:
      break;
  }
  return "enabled";
}

AdminPhase admin_phase(const AdminSettings& s, std::int64_t in_flight, std::int64_t now_ms) {
  switch (s.mode) {
    case AdminMode::Drain:
      return in_flight > 0 ? AdminPhase::Draining : AdminPhase::Drained;
    case AdminMode::Disable:
      return AdminPhase::Disabled;
    case AdminMode::Enabled:
      break;
  }
  return s.holds_at(now_ms) ? AdminPhase::Held : AdminPhase::Enabled;
}

base::MonoNanos admin_out_until(const AdminSettings& s, base::MonoNanos now, std::int64_t now_ms) {
  if (s.mode != AdminMode::Enabled) return kAdminForever;
  if (!s.holds_at(now_ms)) return 0;
  if (s.hold->until_ms == 0) return kAdminForever;
  // A hold is at most a week away (the admin API refuses longer ones; Redis could say anything),
  // so the nanoseconds cannot overflow.
  constexpr std::int64_t kMaxHoldMs = 7LL * 24 * 3600 * 1000;
  return now + std::min(s.hold->until_ms - now_ms, kMaxHoldMs) * 1'000'000;
}

}  // namespace smartlb::routing
