#pragma once
// Ids of the objects one simulated resource creates (responses, messages, files, batches,
// realtime sessions): a prefix and lower-case hex digits drawn from a seeded generator
// (splitmix64). Each sim process seeds its own, so the sims of one test never mint the same id
// (an id names its resource, as on Azure), and a seeded unit test gets the same ids every run.
// Not thread-safe: the engine locks.

#include <cstdint>
#include <string>
#include <string_view>

namespace smartlb::sim {

class IdMinter {
 public:
  explicit IdMinter(std::uint64_t seed) : state_(seed) {}

  /// `prefix` followed by `hex_digits` lower-case hex digits, e.g. next("resp_", 48).
  std::string next(std::string_view prefix, int hex_digits);
  /// A seed for another minter (a realtime session mints its own ids outside the engine's lock).
  std::uint64_t fork_seed() { return next_word(); }

 private:
  std::uint64_t next_word();
  std::uint64_t state_;
};

}  // namespace smartlb::sim
