#include "smartlb/sim/object_ids.hpp"

namespace smartlb::sim {

std::uint64_t IdMinter::next_word() {
  // splitmix64: every seed gives a full-period sequence of well-mixed words.
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string IdMinter::next(std::string_view prefix, int hex_digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  id.reserve(prefix.size() + static_cast<std::size_t>(hex_digits));
  std::uint64_t word = 0;
  for (int i = 0; i < hex_digits; ++i) {
    if (i % 16 == 0) word = next_word();
    id.push_back(kHex[word & 0xf]);
    word >>= 4;
  }
  return id;
}

}  // namespace smartlb::sim
