#pragma once
// Randomness as the routing core sees it: injected, so tests can fix or script it.
#include <cstdint>
#include <vector>

namespace smartlb::base {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // A uniformly distributed integer in [0, bound). `bound` is > 0.
  virtual std::uint64_t below(std::uint64_t bound) = 0;
};

// xoshiro256** seeded through splitmix64: fast, good quality, one instance per thread.
class FastRandom final : public RandomSource {
 public:
  explicit FastRandom(std::uint64_t seed);
  std::uint64_t below(std::uint64_t bound) override;
  std::uint64_t next();

 private:
  std::uint64_t s_[4];
};

// Returns the scripted values in turn (each taken modulo the bound); for exact tests.
class ScriptedRandom final : public RandomSource {
 public:
  explicit ScriptedRandom(std::vector<std::uint64_t> values) : values_(std::move(values)) {}
  std::uint64_t below(std::uint64_t bound) override {
    std::uint64_t v = values_.empty() ? 0 : values_[next_++ % values_.size()];
    return v % bound;
  }

 private:
  std::vector<std::uint64_t> values_;
  std::size_t next_ = 0;
};

}  // namespace smartlb::base
