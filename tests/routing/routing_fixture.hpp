#pragma once
// A routing table, its backend states and the priority selector on a manual clock, addressed
// by table position the way the tests read best.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/candidates.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/selectors/priority_selector.hpp"

namespace smartlb {

inline routing::Verdict throttled() { return routing::judge_status(429, true); }
inline routing::Verdict refused() { return judge_transport(routing::TransportFailure::Connect); }

struct RoutingFixture : ::testing::Test {
  base::ManualClock clock;
  routing::CooldownPolicy policy{std::chrono::seconds(10), std::chrono::milliseconds(100),
                                 std::chrono::seconds(300)};
  std::unique_ptr<routing::RoutingTable> table;
  std::unique_ptr<routing::BackendStates> states;
  routing::PrioritySelector priority;

  void make(std::vector<routing::PoolMember> members) {
    table = std::make_unique<routing::RoutingTable>(std::move(members));
    states = std::make_unique<routing::BackendStates>(clock, policy);
    states->track(*table);
  }
  const routing::PoolMember& member(std::size_t i) const { return table->member(i); }

  std::optional<std::size_t> pick_with(std::string_view dep, const routing::TriedSet& tried,
                                       base::RandomSource& rng, std::int64_t cost = 0) {
    return priority.pick(*table, *states, {dep, tried, cost}, rng);
  }
  std::optional<std::size_t> pick(std::string_view dep = "gpt", const routing::TriedSet& tried = {}) {
    base::ScriptedRandom rng({0});
    return pick_with(dep, tried, rng);
  }
  std::chrono::milliseconds fail(std::size_t i, std::string_view dep, const routing::Verdict& v,
                                 std::optional<std::chrono::milliseconds> hint) {
    return states->record_failure(member(i), dep, v, hint);
  }
  bool available(std::size_t i, std::string_view dep) const { return states->available(member(i), dep); }
  bool reserve(std::size_t i, std::string_view dep, std::int64_t cost) {
    return states->reserve(member(i), dep, cost);
  }
  routing::Unavailability unavailable(std::string_view dep, std::int64_t cost = 0) const {
    return states->unavailability(*table, dep, cost);
  }
};

// Declared quotas over a one-second window.
struct QuotaPool : RoutingFixture {
  void make(std::vector<routing::PoolMember> members) {
    for (auto& m : members) m.quota_window = std::chrono::seconds(1);
    RoutingFixture::make(std::move(members));
  }
  std::optional<std::size_t> pick(std::int64_t cost) {
    base::ScriptedRandom rng({0});
    return pick_with("gpt", {}, rng, cost);
  }
};

using PoolFixture = RoutingFixture;

}  // namespace smartlb
