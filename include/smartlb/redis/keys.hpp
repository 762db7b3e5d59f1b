#pragma once
// The names smartlb uses in Redis, all starting with the configured prefix (REDIS_KEY_PREFIX).
// Hash tags ({...}) keep what one script touches in one cluster slot: a (backend, deployment)'s
// keys share the tag "{backend/deployment}", the replica registry the tag "{replicas}".
#include <cstdint>
#include <string>
#include <string_view>

namespace smartlb::redis {

// The cooldown deadline of a (backend, deployment), or of a whole backend.
inline std::string cooldown_key(std::string_view prefix, std::string_view backend,
                                std::string_view deployment, bool whole_backend) {
  std::string k(prefix);
  k += '{';
  k += backend;
  if (!whole_backend) {
    k += '/';
    k += deployment;
  }
  k += "}:cooldown";
  return k;
}
// The failures of a (backend, deployment) in the last minute, all replicas together (its
// failure_tolerance, docs/scale-out.md): a sorted set of failure times; the cooldown's tag.
inline std::string failures_key(std::string_view prefix, std::string_view backend,
                                std::string_view deployment) {
  std::string k(prefix);
  k += '{';
  k += backend;
  k += '/';
  k += deployment;
  k += "}:failures";
  return k;
}
// A key of one backend's, under the tag "{backend}".
inline std::string backend_key(std::string_view prefix, std::string_view backend, std::string_view suffix) {
  std::string k(prefix);
  k += '{';
  k += backend;
  k += '}';
  k += suffix;
  return k;
}
// Whose turn it is to probe a backend (docs/scale-out.md): the replica's id, expiring with the
// probe interval; and what the last probe found (redis::SharedProbes).
inline std::string probe_turn_key(std::string_view prefix, std::string_view backend) {
  return backend_key(prefix, backend, ":probe-turn");
}
inline std::string probe_result_key(std::string_view prefix, std::string_view backend) {
  return backend_key(prefix, backend, ":probe");
}
// "{quota:<name>}" with braces in the name written as "%7B" / "%7D" (and '%' as "%25"), so
// that a name cannot end the hash tag early.
inline std::string quota_tag(std::string_view prefix, std::string_view quota) {
  std::string k(prefix);
  k += "{quota:";
  for (char c : quota) {
    if (c == '{')
      k += "%7B";
    else if (c == '}')
      k += "%7D";
    else if (c == '%')
      k += "%25";
    else
      k += c;
  }
  k += '}';
  return k;
}
// What the replicas together took of a shared quota (docs/scale-out.md): a hash, field = a
// sub-window's index (Unix time / sub-window length), value = what was counted in it; tagged
// with the quota's name.
inline std::string quota_key(std::string_view prefix, std::string_view quota) {
  return quota_tag(prefix, quota) + ":counts";
}
// The leases of a budget's max_in_flight (redis::SharedInFlight): a hash, field = replica id,
// value = "<slots>:<expiry, Redis's Unix ms>"; tagged with the budget's name.
inline std::string in_flight_key(std::string_view prefix, std::string_view budget) {
  return quota_tag(prefix, budget) + ":in-flight";
}
// The operators' admin settings (docs/operations.md): a hash, field = "backend" or
// "backend/deployment", value = the scope's settings (redis/admin_message.hpp). A scope that is
// enabled without a held cooldown has no field.
inline std::string admin_key(std::string_view prefix) { return std::string(prefix) + "{admin}:settings"; }
// The channel the admin API's changes are published on.
inline std::string admin_channel(std::string_view prefix) { return std::string(prefix) + "admin"; }
// The channel short rate-limit reports are published on (redis::SharedReports).
inline std::string report_channel(std::string_view prefix) { return std::string(prefix) + "reports"; }
// The channel priority classes' demand per target is published on (redis::SharedClassDemand).
inline std::string class_demand_channel(std::string_view prefix) {
  return std::string(prefix) + "class-demand";
}
// The channel cooldowns are published on.
inline std::string cooldown_channel(std::string_view prefix) { return std::string(prefix) + "cooldowns"; }
// Live replicas: a sorted set, member = replica id, score = its heartbeat's expiry (Unix ms).
inline std::string replicas_key(std::string_view prefix) { return std::string(prefix) + "{replicas}"; }
// The replicas' details: a hash, field = replica id, value = JSON (host, start time).
inline std::string replica_info_key(std::string_view prefix) {
  return std::string(prefix) + "{replicas}:info";
}

// `s` with Redis glob's special characters escaped, for SCAN MATCH.
inline std::string glob_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace smartlb::redis
