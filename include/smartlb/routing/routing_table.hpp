#pragma once
// Who may serve, as configured: the backends with their priority, weight and declared quota,
// grouped by priority. Immutable once built; a new configuration builds a new table, while
// what the backends did (BackendStates) is kept beside it, keyed by BackendId.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/backend_id.hpp"

namespace smartlb::routing {

struct PoolMember {
  std::string name;
  int priority = 1;
  std::uint32_t weight = 1;
  std::string deployment_override;  // the deployment this backend really serves, if fixed
  // Declared quota per deployment over `quota_window` (0: none declared). With a quota the
  // router routes ahead of the backend's 429 instead of discovering it.
  std::int64_t tokens_per_window = 0;
  std::int64_t requests_per_window = 0;
  base::Nanos quota_window{std::chrono::seconds(60)};
  // Deployments that draw on one quota (one subscription and region) name the same group: the
  // declared limits then apply to the group as a whole (empty: to this deployment alone).
  std::string quota_group{};
  BackendId id{};  // set by RoutingTable (from `name`, or by position)
  // False: only ever a request's first choice, never tried as a fallback (TrueFoundry's
  // fallback_candidate).
  bool fallback_candidate = true;

  bool has_quota() const { return tokens_per_window > 0 || requests_per_window > 0; }
  // The deployment key this backend serves for a client asking for `requested`.
  std::string_view effective_deployment(std::string_view requested) const {
    return deployment_override.empty() ? requested : std::string_view(deployment_override);
  }
};

// Positions in a table's member list, sharing one priority.
struct PriorityGroup {
  int priority = 1;
  std::vector<std::size_t> members;
};

class RoutingTable {
 public:
  RoutingTable() = default;  // no members
  // Members keep their order (a member's position is its index); ids come from `ids`.
  RoutingTable(std::vector<PoolMember> members, BackendIds& ids);
  // Ids 0, 1, 2, ... in member order (tests, benchmarks).
  explicit RoutingTable(std::vector<PoolMember> members);

  std::size_t size() const { return members_.size(); }
  const PoolMember& member(std::size_t position) const { return members_[position]; }
  std::span<const PoolMember> members() const { return members_; }
  std::span<const PriorityGroup> groups() const { return groups_; }  // best (lowest) first
  bool any_quota() const { return any_quota_; }
  // One past the highest id in the table: the size state arrays need for it.
  std::size_t id_bound() const { return id_bound_; }

 private:
  void index();

  std::vector<PoolMember> members_;
  std::vector<PriorityGroup> groups_;
  bool any_quota_ = false;
  std::size_t id_bound_ = 0;
};

}  // namespace smartlb::routing
