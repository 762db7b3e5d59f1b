#pragma once
// Affinity: requests with the same key (a prompt_cache_key, a user) keep going to the same
// member while it is a candidate, so a backend's prompt cache keeps serving them. Weighted
// rendezvous hashing (highest random weight): each (key, member name) gets a score, the best
// candidate wins. A member leaving the candidates (cooling, tried, removed from the
// configuration) moves only the keys it held, spread over the others by weight; when it comes
// back, they come back. Scores depend on member names, not positions or ids, so reordering the
// configuration moves nothing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "smartlb/routing/candidates.hpp"
#include "smartlb/routing/routing_table.hpp"

namespace smartlb::routing {

// A 64-bit hash of (key, member name): FNV-1a over the key's length, the key and the name,
// finished with splitmix64's mixer. Fixed arithmetic, so the same on every build and machine
// (std::hash is not: it differs between standard libraries and versions, and a restart or an
// upgrade would then move every key).
std::uint64_t affinity_hash(std::string_view key, std::string_view member_name);

// The score of `member_name` with `weight` for `key`: -weight / ln(u), u = the hash mapped
// into (0, 1). Over many keys a member wins in proportion to its weight; weight 0 never wins
// against a positive weight.
double affinity_score(std::string_view key, std::string_view member_name, std::uint32_t weight);

// The candidate (a table position) with the highest score for `key`; ties go to the first in
// candidate order. `candidates` is not empty.
std::size_t pick_by_affinity(std::string_view key, const Candidates& candidates, const RoutingTable& table);

}  // namespace smartlb::routing
