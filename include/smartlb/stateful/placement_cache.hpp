#pragma once
// Where untagged ids were found: an id that no tag places (an object made before smartlb, or
// through another client) is tried on each resource once; the one that knew it is remembered
// here, so the next request naming it goes straight there. Bounded: the least recently used
// entry goes when a new one needs room. Per process and not synchronised (the caller locks);
// replicas do not share it -- tags are what makes replicas agree.
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace smartlb::stateful {

class PlacementCache {
 public:
  static constexpr std::size_t kDefaultCapacity = 8192;

  explicit PlacementCache(std::size_t capacity = kDefaultCapacity)
      : capacity_(capacity == 0 ? 1 : capacity) {}
  PlacementCache(const PlacementCache&) = delete;
  PlacementCache& operator=(const PlacementCache&) = delete;

  // The tag bits of the resource that knew `id`, which becomes the most recently used.
  std::optional<std::uint64_t> find(std::string_view id);
  // `id` lives on the resource with tag bits `bits` (replacing what was known of it).
  void learn(std::string_view id, std::uint64_t bits);
  void forget(std::string_view id);

  std::size_t size() const { return index_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  using Entry = std::pair<std::string, std::uint64_t>;
  std::size_t capacity_;
  std::list<Entry> order_;  // most recently used first; nodes never move, so the index can view their keys
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
};

}  // namespace smartlb::stateful
