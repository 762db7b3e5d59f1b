#pragma once
// A rate budget over a sliding window, kept in buckets. It is deliberately conservative: the
// buckets it still counts always cover at least the last `window`, so no interval of that
// length (and so no fixed window of a backend's own accounting) ever sees more than `limit`.
// Not thread-safe: the owner serialises access.
#include <cstdint>
#include <vector>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

// What a window gives back: `amount`, `in` from now.
struct WindowRelease {
  base::Nanos in{0};
  std::int64_t amount = 0;
};

// The most that a demand of `per_second` from now on outgrows what `releases` (sorted by `in`)
// give back by then, over every horizon up to `window`, and never less than `least` (0 when
// nothing is asked): what a lower priority class must leave in one or several windows for the classes
// above it (routing/class_reserve.hpp). A window that will give back less than they ask for --
// what it counts was spent before they asked, or a gap it refused them comes round again -- is
// kept for them ahead of time.
std::int64_t demand_shortfall(const std::vector<WindowRelease>& releases, double per_second,
                              std::int64_t least, base::Nanos window);

class SlidingWindowBudget {
 public:
  // Finer buckets waste less of the window (the budget forgets a bucket only a whole window
  // after its end: up to 1/buckets of the window is counted twice); advancing is incremental,
  // so the count costs nothing per check.
  static constexpr int kDefaultBuckets = 256;

  SlidingWindowBudget(std::int64_t limit, base::Nanos window, int buckets = kDefaultBuckets);

  std::int64_t limit() const { return limit_; }
  // Adds `amount` if it fits in what the window has left; false (and no change) otherwise.
  bool try_consume(std::int64_t amount, base::MonoNanos now);
  bool fits(std::int64_t amount, base::MonoNanos now);
  std::int64_t used(base::MonoNanos now);
  // Adds `amount` whether it fits or not, and returns the bucket it went to (for adjust).
  std::int64_t consume(std::int64_t amount, base::MonoNanos now);
  // Corrects an earlier consume() into `bucket` by `delta` (a request's real cost, once known).
  // While the bucket still counts, it takes the correction (never going below zero); once it
  // was forgotten, a refund has nothing left to undo and an extra charge goes to the current
  // bucket.
  void adjust(std::int64_t bucket, std::int64_t delta, base::MonoNanos now);
  void set_limit(std::int64_t limit) { limit_ = limit < 0 ? 0 : limit; }
  // How long until nothing counted now is counted any more (the whole limit free again): the
  // newest bucket's expiry. Cheap: the newest bucket is usually the current one.
  base::Nanos until_empty(base::MonoNanos now);
  // How long until the window next gives anything back (its oldest counted bucket leaves); 0
  // when nothing is counted.
  base::Nanos until_release(base::MonoNanos now);
  // Appends what each counted bucket gives back and when, oldest first.
  void releases(base::MonoNanos now, std::vector<WindowRelease>& out);
  // demand_shortfall() over this window alone.
  std::int64_t demand_shortfall(double per_second, std::int64_t least, base::MonoNanos now);
  base::Nanos window() const {
    return base::Nanos(bucket_nanos_ * static_cast<std::int64_t>(ring_.size() - 1));
  }
  // How long until `amount` fits: 0 when it fits now; the full window when it can never fit
  // (larger than the limit), so callers still get a finite retry time.
  base::Nanos wait_for(std::int64_t amount, base::MonoNanos now);

 private:
  void advance(base::MonoNanos now);

  struct Bucket {
    std::int64_t index = -1;  // now / bucket_length when it was filled
    std::int64_t used = 0;
  };
  std::int64_t limit_;
  std::int64_t bucket_nanos_;
  std::vector<Bucket> ring_;  // buckets + 1 slots: the current one and `buckets` behind it
  std::int64_t used_ = 0;
  std::int64_t advanced_to_ = -1;  // the newest bucket index `advance` has seen
};

}  // namespace smartlb::routing
