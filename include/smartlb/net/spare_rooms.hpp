#pragma once
// The storage of read buffers that wait empty (a waiting event stream's, a pooled connection's),
// kept for the next buffer that reads rather than freed and allocated again: what is given up
// before a wait is taken back after it, with no malloc on the way (architecture.md, "Why it is
// fast"). Bounded: at most MaxKept rooms of at most MaxKeptBytes each; a larger one is freed.
#include <cstddef>
#include <vector>

#include "smartlb/io/beast.hpp"

namespace smartlb::net {

template <std::size_t MaxKept, std::size_t MaxKeptBytes>
class SpareRooms {
 public:
  static constexpr std::size_t kMaxKept = MaxKept;
  static constexpr std::size_t kMaxKeptBytes = MaxKeptBytes;

  // Before a wait: the room of `buffer` (empty), kept or freed. Returns its size.
  std::size_t give(io::beast::flat_buffer& buffer) {
    const std::size_t room = buffer.capacity();
    if (kept_.size() < kMaxKept && room <= kMaxKeptBytes) {
      if (kept_.capacity() == 0) kept_.reserve(kMaxKept);
      kept_.push_back(std::move(buffer));  // `buffer` is left without storage
    } else {
      buffer.shrink_to_fit();  // empty: its storage is freed
    }
    return room;
  }
  // After the wait: `buffer` (without storage) gets a room of at least `room` bytes.
  void take(io::beast::flat_buffer& buffer, std::size_t room) {
    if (!kept_.empty() && kept_.back().capacity() >= room) {
      buffer = std::move(kept_.back());
      kept_.pop_back();
    } else {
      buffer.reserve(room);
    }
  }
  std::size_t kept() const { return kept_.size(); }

 private:
  std::vector<io::beast::flat_buffer> kept_;
};

}  // namespace smartlb::net
