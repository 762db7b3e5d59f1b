#pragma once
// A replica's priority-class demand as it travels to the others (redis::SharedClassDemand):
// {"r": replica, "t": [{"b": backend, "d": deployment, "l": [[tokens/s, requests/s] per class]}]}.
// Written by other replicas, or anyone with access to Redis: every member is checked. Pure.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/routing/backend_states.hpp"

namespace smartlb::redis {

inline constexpr std::size_t kMaxDemandTargets = 512;  // per message; a longer one is refused

struct DemandMessage {
  std::string replica;
  std::vector<routing::BackendStates::TargetDemand> targets;
};
std::string encode(const DemandMessage& m);
std::optional<DemandMessage> decode_demand(std::string_view text);

}  // namespace smartlb::redis
