#pragma once
// A bounded store of one kind of object (responses, files, batches) keyed by id, in creation
// order: at most `max_objects` objects and `max_bytes` bytes (each object's size is what its
// owner says it is). Either it refuses what does not fit (insert) or it first drops the
// oldest objects until it fits (make_room, then insert). Lists pages the way OpenAI's list
// calls do: newest or oldest first, starting after a given id, `limit` at a time.
// Not thread-safe: the engine locks.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace smartlb::sim {

struct StoreLimits {
  std::size_t max_objects = 10'000;
  std::size_t max_bytes = 256u * 1024 * 1024;
};

enum class ListOrder { NewestFirst, OldestFirst };

template <class T>
struct ListPage {
  std::vector<const T*> items;
  bool has_more = false;
};

template <class T>
class ObjectStore {
 public:
  explicit ObjectStore(StoreLimits limits) : limits_(limits) {}

  /// Whether an object of `bytes` fits now, without dropping anything.
  bool fits(std::size_t bytes) const {
    return by_id_.size() < limits_.max_objects &&
           bytes <= limits_.max_bytes - std::min(used_, limits_.max_bytes);
  }

  /// Drops the oldest objects until an object of `bytes` fits. False (and nothing dropped)
  /// when it never can: larger than max_bytes, or max_objects is 0.
  bool make_room(std::size_t bytes) {
    if (bytes > limits_.max_bytes || limits_.max_objects == 0) return false;
    while (!fits(bytes)) erase_entry(entries_.begin());
    return true;
  }

  /// Stores `value` under `id` when it fits; false (nothing changed) when it does not or the
  /// id is taken.
  bool insert(std::string id, T value, std::size_t bytes) {
    if (!fits(bytes) || by_id_.contains(id)) return false;
    const std::uint64_t sequence = next_sequence_++;
    by_id_.emplace(id, sequence);
    entries_.emplace(sequence, Entry{std::move(id), std::move(value), bytes});
    used_ += bytes;
    return true;
  }

  T* find(std::string_view id) {
    const auto found = by_id_.find(std::string(id));
    return found == by_id_.end() ? nullptr : &entries_.at(found->second).value;
  }
  const T* find(std::string_view id) const { return const_cast<ObjectStore*>(this)->find(id); }

  bool erase(std::string_view id) {
    const auto found = by_id_.find(std::string(id));
    if (found == by_id_.end()) return false;
    erase_entry(entries_.find(found->second));
    return true;
  }

  /// Up to `limit` objects that `keep` accepts, in `order`, starting after the object `after`
  /// (from the start when empty; an empty page when `after` is not stored).
  ListPage<T> list(ListOrder order, std::string_view after, std::size_t limit,
                   const std::function<bool(const T&)>& keep = {}) const {
    ListPage<T> page;
    const auto collect = [&](auto begin, auto end) {
      auto it = begin;
      if (!after.empty()) {
        const auto found = by_id_.find(std::string(after));
        if (found == by_id_.end()) return;
        while (it != end && it->first != found->second) ++it;
        if (it != end) ++it;
      }
      for (; it != end; ++it) {
        if (keep && !keep(it->second.value)) continue;
        if (page.items.size() == limit) {
          page.has_more = true;
          return;
        }
        page.items.push_back(&it->second.value);
      }
    };
    if (order == ListOrder::NewestFirst) {
      collect(entries_.rbegin(), entries_.rend());
    } else {
      collect(entries_.begin(), entries_.end());
    }
    return page;
  }

  std::size_t size() const { return by_id_.size(); }
  std::size_t bytes() const { return used_; }
  const StoreLimits& limits() const { return limits_; }

 private:
  struct Entry {
    std::string id;
    T value;
    std::size_t bytes;
  };

  void erase_entry(typename std::map<std::uint64_t, Entry>::iterator it) {
    used_ -= it->second.bytes;
    by_id_.erase(it->second.id);
    entries_.erase(it);
  }

  StoreLimits limits_;
  std::map<std::uint64_t, Entry> entries_;  // creation order
  std::unordered_map<std::string, std::uint64_t> by_id_;
  std::uint64_t next_sequence_ = 0;
  std::size_t used_ = 0;
};

}  // namespace smartlb::sim
