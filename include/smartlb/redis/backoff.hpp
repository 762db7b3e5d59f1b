#pragma once
// The wait before the next reconnection attempt: doubling from `initial` up to `cap`, each
// wait drawn in [half, full] (jitter, so replicas that lost Redis together do not return in
// step). Pure: the random source is injected.
#include <algorithm>
#include <chrono>

#include "smartlb/base/random.hpp"

namespace smartlb::redis {

class ReconnectBackoff {
 public:
  ReconnectBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap)
      : initial_(initial), cap_(cap), next_(initial) {}

  // The wait before the next attempt; each call doubles the following one, up to the cap.
  std::chrono::milliseconds next(base::RandomSource& rng) {
    const auto full = next_;
    next_ = std::min(cap_, next_ * 2);
    const auto half = full / 2;
    return half + std::chrono::milliseconds(rng.below(static_cast<std::uint64_t>((full - half).count()) + 1));
  }
  // A connection succeeded: the next loss starts from `initial` again.
  void reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_, cap_, next_;
};

}  // namespace smartlb::redis
