#pragma once
// What replicas tell each other about an operator's admin settings (docs/operations.md): a
// change as it goes out on the admin channel, and a scope's settings as the admin hash stores
// them (read back whole when Redis (re)connects and when a replica starts). Pure; anything read
// from Redis is checked member by member (anyone with access to Redis can write there).
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/routing/admin_state.hpp"

namespace smartlb::redis {

std::string encode_change(const routing::AdminChange& change, std::string_view replica);
struct ReceivedChange {
  routing::AdminChange change;
  std::string replica;  // who made it
};
std::optional<ReceivedChange> decode_change(std::string_view text);

std::string encode_settings(const routing::AdminSettings& settings);
std::optional<routing::AdminSettings> decode_settings(std::string_view text);

// A scope's field in the admin hash: "backend", or "backend/deployment" (a backend's name has
// no '/'), and back.
std::string admin_field(std::string_view backend, const std::optional<std::string>& deployment);
struct AdminScope {
  std::string backend;
  std::optional<std::string> deployment;
};
AdminScope admin_scope_of(std::string_view field);

}  // namespace smartlb::redis
