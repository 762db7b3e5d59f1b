#include "smartlb/routing/candidates.hpp"

namespace smartlb::routing {

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

}  // namespace smartlb::routing
