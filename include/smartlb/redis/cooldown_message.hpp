#pragma once
// What replicas tell each other about a cooldown (the value of its key and the message on the
// cooldown channel): "<until_ms> <json>", the deadline first so that a Lua script can compare
// it without decoding JSON. Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/routing/outcome.hpp"

namespace smartlb::redis {

struct CooldownMessage {
  std::string backend;     // the configured name
  std::string deployment;  // the state's deployment key ("" for a whole backend)
  bool whole_backend = false;
  std::int64_t until_ms = 0;  // Unix milliseconds
  routing::FailureCause cause = routing::FailureCause::None;
  std::string replica;  // who saw it
};

std::string encode(const CooldownMessage& m);
std::optional<CooldownMessage> decode_cooldown(std::string_view text);

// The inverse of to_string(FailureCause); None for a name this version does not know.
routing::FailureCause failure_cause_named(std::string_view name);

}  // namespace smartlb::redis
