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

namespace smartlb {

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
  std::string_view deployment;  // as the client asked for it
  const TriedSet& tried;
  std::int64_t cost = 0;  // estimated tokens, for declared quotas
};

class Candidates {
 public:
  // Adds those of `positions` that may serve `request` at `now`. (Inline, like draw_weighted:
  // a selector is one loop over its candidates, once per request.)
  void gather(const RoutingTable& table, std::span<const std::size_t> positions, const BackendStates& states,
              const PickRequest& request, MonoNanos now) {
    for (std::size_t i : positions) {
      const PoolMember& m = table.member(i);
      if (request.tried.contains(i) || !states.available(m, request.deployment, now, request.cost)) continue;
      if (count_ < kInline && spill_.empty()) {
        inline_[count_] = i;
      } else {
        if (spill_.empty()) spill_.assign(inline_, inline_ + count_);
        spill_.push_back(i);
      }
      ++count_;
      total_weight_ += m.weight;
    }
  }
  void clear() {
    spill_.clear();
    count_ = 0;
    total_weight_ = 0;
  }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t operator[](std::size_t k) const { return data()[k]; }
  std::uint64_t total_weight() const { return total_weight_; }

  // One candidate, with probability proportional to its weight. Not empty().
  std::size_t draw_weighted(const RoutingTable& table, RandomSource& rng) const {
    const std::size_t* ids = data();
    std::uint64_t draw = rng.below(total_weight_);
    for (std::size_t k = 0; k < count_; ++k) {
      const std::uint32_t w = table.member(ids[k]).weight;
      if (draw < w) return ids[k];
      draw -= w;
    }
    return ids[count_ - 1];
  }

 private:
  const std::size_t* data() const { return count_ <= kInline && spill_.empty() ? inline_ : spill_.data(); }

  static constexpr std::size_t kInline = 64;  // ordinary pools need no allocation
  std::size_t inline_[kInline];
  std::vector<std::size_t> spill_;
  std::size_t count_ = 0;
  std::uint64_t total_weight_ = 0;
};

}  // namespace smartlb
