#pragma once
// A backend's identity. Runtime state (cooldowns, quota windows, pooled connections, metric
// series) is keyed by it, not by the backend's position in a configuration, so that it can
// outlive the configuration that introduced the backend.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace smartlb::routing {

// Dense (0, 1, 2, ... in order of first sight), so state lives in arrays indexed by `value`.
struct BackendId {
  std::uint32_t value = 0;
  friend constexpr bool operator==(BackendId, BackendId) = default;
  friend constexpr auto operator<=>(BackendId, BackendId) = default;
};

// Names to ids for the life of the process: a name keeps its id across configurations, a new
// name gets the next id, and an id is never given to another name.
class BackendIds {
 public:
  BackendId id_for(std::string_view name) {
    auto [it, inserted] =
        ids_.try_emplace(std::string(name), BackendId{static_cast<std::uint32_t>(ids_.size())});
    return it->second;
  }
  std::size_t size() const { return ids_.size(); }
  // Names by id.
  std::vector<std::string> names() const {
    std::vector<std::string> out(ids_.size());
    for (const auto& [name, id] : ids_) out[id.value] = name;
    return out;
  }

 private:
  std::unordered_map<std::string, BackendId> ids_;
};

}  // namespace smartlb::routing
