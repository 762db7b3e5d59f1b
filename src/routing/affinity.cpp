#include "smartlb/routing/affinity.hpp"

#include <cmath>

namespace smartlb::routing {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325u;
constexpr std::uint64_t kFnvPrime = 0x100000001b3u;

std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

// splitmix64's finalizer: FNV-1a's low bits mix poorly on their own.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t affinity_hash(std::string_view key, std::string_view member_name) {
  // The key's length first, so that ("ab", "c") and ("a", "bc") differ.
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((std::uint64_t{key.size()} >> (8 * i)) & 0xFF);
  std::uint64_t h = fnv1a(kFnvOffset, std::string_view(length, 8));
  h = fnv1a(h, key);
  h = fnv1a(h, member_name);
  return mix(h);
}

double affinity_score(std::string_view key, std::string_view member_name, std::uint32_t weight) {
  // The top 53 bits, centred in their interval: u in (0, 1), never 0 or 1.
  const double u = (static_cast<double>(affinity_hash(key, member_name) >> 11) + 0.5) * 0x1p-53;
  return -static_cast<double>(weight) / std::log(u);
}

std::size_t pick_by_affinity(std::string_view key, const Candidates& candidates, const RoutingTable& table) {
  std::size_t best = candidates[0];
  double best_score = -1;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const PoolMember& m = table.member(candidates[k]);
    const double score = affinity_score(key, m.name, m.weight);
    if (score > best_score) {
      best_score = score;
      best = candidates[k];
    }
  }
  return best;
}

}  // namespace smartlb::routing
