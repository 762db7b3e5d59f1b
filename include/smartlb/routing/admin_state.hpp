#pragma once
// What an operator set on a backend, or on one deployment of it, through the admin API
// (docs/operations.md): a mode that takes it out of rotation until it is enabled again (drain,
// disable), and apart from it a cooldown held by hand (for a while, or until lifted). Plain
// values: BackendStates keeps them per scope, redis/shared_admin shares them between replicas.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

enum class AdminMode : std::uint8_t {
  Enabled = 0,  // routed as configured
  Drain,        // no new requests; /status follows its in-flight requests until none is left
  Disable,      // no new requests, at once; nobody waits for what is in flight
};
std::string_view to_string(AdminMode m);  // "enabled", "drain", "disable"
std::optional<AdminMode> admin_mode_named(std::string_view name);

// Who changed a setting and when: a token's name, role and fingerprint (never the token).
struct AdminStamp {
  std::string by;
  std::int64_t at_ms = 0;  // Unix milliseconds
  bool operator==(const AdminStamp&) const = default;
};

// A cooldown held by hand.
struct AdminHold {
  std::int64_t until_ms = 0;  // Unix milliseconds; 0: until lifted
  AdminStamp set;
  bool operator==(const AdminHold&) const = default;
};

// One scope's settings: a backend's, or one (backend, deployment)'s.
struct AdminSettings {
  AdminMode mode = AdminMode::Enabled;
  AdminStamp mode_set;  // who set the mode (empty while it was never set)
  std::optional<AdminHold> hold;
  // A hold that ended is as good as none.
  bool holds_at(std::int64_t now_ms) const {
    return hold && (hold->until_ms == 0 || hold->until_ms > now_ms);
  }
  bool any(std::int64_t now_ms) const { return mode != AdminMode::Enabled || holds_at(now_ms); }
  bool operator==(const AdminSettings&) const = default;
};

// One change, as the admin API makes it and replicas exchange it.
struct AdminChange {
  enum class Kind : std::uint8_t {
    Mode,  // set `mode` (Enabled: back in rotation; a held cooldown stays)
    Hold,  // hold a cooldown until `hold_until_ms` (0: until lifted), replacing a held one
    Lift,  // end the held cooldown and every cooldown of the scope now (a 429's included)
  };
  std::string backend;                    // the configured name
  std::optional<std::string> deployment;  // none: the whole backend
  Kind kind = Kind::Mode;
  AdminMode mode = AdminMode::Enabled;  // Kind::Mode
  std::int64_t hold_until_ms = 0;       // Kind::Hold
  AdminStamp stamp;
  bool operator==(const AdminChange&) const = default;
};
std::string_view to_string(AdminChange::Kind k);  // "mode", "hold", "lift"

// `s` with `c` applied (the scope and backend of `c` are the caller's business).
AdminSettings apply_change(AdminSettings s, const AdminChange& c);

// What a scope is, as /status and the admin API's answers say it.
enum class AdminPhase : std::uint8_t {
  Enabled,   // in rotation (as far as the operator is concerned: it may still cool down)
  Draining,  // drain set, requests still in flight
  Drained,   // drain set, nothing in flight
  Disabled,
  Held,  // enabled, with a held cooldown running
};
std::string_view to_string(AdminPhase p);  // "enabled", "draining", "drained", "disabled", "held"
AdminPhase admin_phase(const AdminSettings& s, std::int64_t in_flight, std::int64_t now_ms);

// The deadline the request path reads for a scope: 0 while nothing is set, kAdminForever while
// it is out until someone changes it, else the monotonic moment a held cooldown ends. `now` and
// `now_ms` are the same instant on the two clocks.
inline constexpr base::MonoNanos kAdminForever = std::numeric_limits<base::MonoNanos>::max();
base::MonoNanos admin_out_until(const AdminSettings& s, base::MonoNanos now, std::int64_t now_ms);

}  // namespace smartlb::routing
