#include "smartlb/stateful/placement_cache.hpp"

namespace smartlb::stateful {

std::optional<std::uint64_t> PlacementCache::find(std::string_view id) {
  const auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

void PlacementCache::learn(std::string_view id, std::uint64_t bits) {
  if (const auto it = index_.find(id); it != index_.end()) {
    it->second->second = bits;
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  if (index_.size() >= capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
  order_.emplace_front(std::string(id), bits);
  index_.emplace(order_.front().first, order_.begin());
}

void PlacementCache::forget(std::string_view id) {
  const auto it = index_.find(id);
  if (it == index_.end()) return;
  const auto node = it->second;
  index_.erase(it);
  order_.erase(node);
}

}  // namespace smartlb::stateful
