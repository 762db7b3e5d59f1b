#pragma once
// Which members of a table may serve one request: not tried by it yet, not cooling down, and
// with room in their declared quota. Selectors gather candidates, then choose among them.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/slow_start.hpp"

namespace smartlb::routing {

// The members (table positions) one request has already tried. Inline bits for the first 64.
class TriedSet {
 public:
  void add(std::size_t i);
  bool contains(std::size_t i) const;
  std::size_t count() const { return count_; }

 private:
  std::uint64_t bits_ = 0;
  std::vector<bool> more_;
  std::size_t count_ = 0;
};

// What a selector is asked.
struct PickRequest {
  PickRequest(std::string_view d, const TriedSet& t, std::int64_t c = 0, std::string_view affinity = {},
              base::Nanos slow = base::Nanos{0}, ClassReserve r = {})
      : deployment(d), tried(t), cost(c), affinity_key(affinity), slow_start(slow), reserve(r) {}

  std::string_view deployment;  // as the client asked for it
  const TriedSet& tried;
  std::int64_t cost = 0;  // estimated tokens, for declared quotas
  // Requests with the same key keep to one candidate while it is available (empty: none).
  std::string_view affinity_key;
  // A member whose cooldown ended less than this long ago draws with a reduced weight (0: off).
  base::Nanos slow_start{0};
  // What this request leaves of each member's quota to the priority classes above its own
  // (routing/class_reserve.hpp); the first class leaves nothing.
  ClassReserve reserve = {};
};

class Candidates {
 public:
  // Adds those of `positions` that may serve `request` at `now`. (Inline, like draw_weighted:
  // a selector is one loop over its candidates, once per request.)
  void gather(const RoutingTable& table, std::span<const std::size_t> positions, const BackendStates& states,
              const PickRequest& request, base::MonoNanos now) {
    for (std::size_t i : positions) {
      const PoolMember& m = table.member(i);
      if (request.tried.contains(i) || (!m.fallback_candidate && request.tried.count() > 0) ||
          !states.available(m, request.deployment, now, request.cost, request.reserve))
        continue;
      std::uint32_t weight = m.weight;
      if (request.slow_start.count() > 0)
        weight =
            slow_start_weight(weight, states.cooldown_ended(m, request.deployment), now, request.slow_start);
      if (count_ < kInline && spill_.empty()) {
        inline_[count_] = {i, weight};
      } else {
        if (spill_.empty()) spill_.assign(inline_, inline_ + count_);
        spill_.push_back({i, weight});
      }
      ++count_;
      total_weight_ += weight;
    }
  }
  void clear() {
    spill_.clear();
    count_ = 0;
    total_weight_ = 0;
  }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t operator[](std::size_t k) const { return data()[k].position; }
  // The weight it draws with (its member's, or less during a slow start).
  std::uint32_t weight(std::size_t k) const { return data()[k].weight; }
  std::uint64_t total_weight() const { return total_weight_; }

  // One candidate, with probability proportional to its weight. Not empty().
  std::size_t draw_weighted(const RoutingTable& table, base::RandomSource& rng) const {
    (void)table;
    const Entry* e = data();
    std::uint64_t draw = rng.below(total_weight_);
    for (std::size_t k = 0; k < count_; ++k) {
      if (draw < e[k].weight) return e[k].position;
      draw -= e[k].weight;
    }
    return e[count_ - 1].position;
  }

 private:
  struct Entry {
    std::size_t position;
    std::uint32_t weight;
  };
  const Entry* data() const { return count_ <= kInline && spill_.empty() ? inline_ : spill_.data(); }

  static constexpr std::size_t kInline = 64;  // ordinary pools need no allocation
  Entry inline_[kInline];
  std::vector<Entry> spill_;
  std::size_t count_ = 0;
  std::uint64_t total_weight_ = 0;
};

}  // namespace smartlb::routing
