#include "smartlb/routing/candidates.hpp"

namespace smartlb {

void TriedSet::add(std::size_t i) {
  if (contains(i)) return;
  if (i < 64) {
    bits_ |= (std::uint64_t{1} << i);
  } else {
    if (more_.size() <= i - 64) more_.resize(i - 64 + 1, false);
    more_[i - 64] = true;
  }
  ++count_;
}

bool TriedSet::contains(std::size_t i) const {
  if (i < 64) return (bits_ >> i) & 1u;
  return i - 64 < more_.size() && more_[i - 64];
}

void Candidates::gather(const RoutingTable& table, std::span<const std::size_t> positions,
                        const BackendStates& states, const PickRequest& request, MonoNanos now) {
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

std::size_t Candidates::draw_weighted(const RoutingTable& table, RandomSource& rng) const {
  const std::size_t* ids = data();
  std::uint64_t draw = rng.below(total_weight_);
  for (std::size_t k = 0; k < count_; ++k) {
    const std::uint32_t w = table.member(ids[k]).weight;
    if (draw < w) return ids[k];
    draw -= w;
  }
  return ids[count_ - 1];
}

}  // namespace smartlb
