#pragma once
// The admin API (docs/operations.md): its routes under /admin/, what each needs, and the
// answer to one request, given who asked. No sockets: the admin listener reads the request and
// writes the answer; this decides it. Every change is applied through BackendStates (which tells
// whoever shares it with other replicas) and answered with the scope's new state.
//
//   GET    /admin/whoami                          the token's name and role
//   GET    /admin/backends                        every backend's admin state
//   GET    /admin/backends/{name}[?deployment=D]  one backend's (or deployment's)
//   POST   /admin/backends/{name}/drain|disable|enable[?deployment=D]
//   POST   /admin/backends/{name}/cooldown[?deployment=D]   {"seconds": N} or nothing: until lifted
//   DELETE /admin/backends/{name}/cooldown[?deployment=D]   lifts it, a 429's cooldown too
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "smartlb/admin/admin_access.hpp"
#include "smartlb/routing/backend_states.hpp"

namespace smartlb::admin {

struct AdminRoute {
  enum class Kind : std::uint8_t { None, Whoami, Backends, Backend, Action };
  Kind kind = Kind::None;  // None: not an admin API path (the listener's own, or 404)
  AdminNeed need = AdminNeed::Read;
  std::string_view backend;  // Backend, Action
  std::string_view action;   // Action: drain, disable, enable, cooldown
  std::string_view allow;    // the methods it takes, for a 405's Allow
};
AdminRoute route_admin(std::string_view path);

struct AdminRequest {
  std::string_view method;
  std::string_view query;  // without the '?'
  std::string_view body;
};

struct AdminApiContext {
  std::span<const std::string> backends;  // the current configuration's, in order
  bool shared = false;                    // with REDIS_URL: changes reach every replica
};

struct AdminAnswer {
  unsigned status = 200;
  nlohmann::json body;
  // For the log, after a change: what it was, on what, by whom ("" for a read or a refusal).
  std::string audit;
};

// The answer to `request` on `route` (not Kind::None) by `caller` (none: no tokens are set, and
// only reads get here). The method is checked here (405).
AdminAnswer answer_admin(const AdminRoute& route, const AdminRequest& request,
                         const std::optional<AdminCaller>& caller, routing::BackendStates& states,
                         const AdminApiContext& context);

// A scope's admin state as the API and /status show it, at `now_ms` (Unix milliseconds).
nlohmann::json admin_scope_json(std::string_view backend, const routing::BackendStates::AdminView& view,
                                std::int64_t now_ms, base::MonoNanos now);
// Unix milliseconds as "2026-03-01T12:00:00.123Z".
std::string iso_utc(std::int64_t unix_ms);

// The longest cooldown that may be held for a time (one held longer is held until lifted).
inline constexpr std::int64_t kMaxHoldSeconds = 7 * 24 * 3600;

}  // namespace smartlb::admin
