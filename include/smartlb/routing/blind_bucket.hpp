#pragma once
// A token bucket refills continuously. A 429 from one, with a Retry-After to the moment the
// request fits (as OpenAI's and the sims' `retry-after-ms` say), tells what the bucket holds at
// that moment: the refused request's cost. Two such moments and what smartlb's own sends took
// from the bucket between them give its refill rate:
//     rate = (cost2 - cost1 + taken between) / (moment2 - moment1)
// provided the bucket never filled up in between. It stays short under load, and a gap of at most
// kMaxGap keeps an idle spell from counting. The rate is the median of the recent samples (a
// higher quantile took more 429s against windows, and no fewer against buckets). With a rate, the level is
// known from the last 429 on: its cost at its moment, plus the refill since (less before it), less
// smartlb's sends since.
//
// For a deployment that reports nothing (every `x-ratelimit-remaining-*` is `-1`): without this,
// every request that the bucket cannot take yet costs a 429 before it goes elsewhere.
//
// A bucket cannot give back faster than it refills: from a 429's moment on, what it takes is at
// most that request's cost plus the refill since. A window does: a fixed one gives its whole limit
// back at its boundary, a sliding one what it admitted a window ago. So every request taken is
// checked against the rate (`taken`), and proof of a refill over kOffBy times the rate means no
// bucket. So does a 429 that names a moment later than the cost takes to refill (a bucket is never
// short of a request by more than its cost). Either drops what was learned for kDoubtFor. A new
// rate is on trial, routing nothing, for 1.5 times the widest gap its samples spanned: a window's
// samples span a window, so one of its boundaries passes in that time. A request taken where the level said
// it did not fit raises the level, and the rate to what that request proves came back (it was learned low).
//
// Not thread-safe: ReportedBudget keeps it under its mutex. Pure: times are passed in.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

class BlindBucket {
 public:
  static constexpr base::Nanos kMinGap = std::chrono::milliseconds(20);  // closer moments: one sample later
  static constexpr base::Nanos kMaxGap = std::chrono::seconds(2);        // further: no sample
  static constexpr std::size_t kSamples = 8;                             // recent samples kept
  static constexpr std::size_t kMinSamples = 3;                          // before a rate is given
  // A 429 sent at `sent` may name a moment up to this much later than its cost takes to refill
  // (the rate's error, the round trip) before the limiter is taken for no bucket.
  static constexpr double kShortByAtMost = 1.5;  // times the cost
  static constexpr base::Nanos kLateBy = std::chrono::milliseconds(25);
  // A request taken that proves a refill over this many times the rate: no bucket.
  static constexpr double kOffBy = 2.0;
  // Caught being no bucket: nothing is learned for this long. A real bucket is not caught; a
  // window would be, again, after each relearning.
  static constexpr base::Nanos kDoubtFor = std::chrono::minutes(2);

  // A 429 for a request sent at `sent` said a request of `cost` fits at `fits_at`; smartlb's
  // sends there had taken `taken` tokens in all before it left.
  void refused(base::MonoNanos sent, base::MonoNanos fits_at, std::int64_t cost, std::int64_t taken);
  // A request of `cost` sent at `at` was taken (smartlb's sends there before it: `taken` in all).
  void taken(base::MonoNanos at, std::int64_t cost, std::int64_t taken);

  // The refill rate, tokens per nanosecond (0: not learned yet).
  double rate() const { return rate_; }
  // Whether the level is known: a rate past its trial, and a 429 to count from.
  bool known() const { return rate_ > 0 && trusted_ && anchored_; }
  // What the bucket holds at `now` when smartlb's sends there have taken `taken` in all (known()
  // only). Negative: short by that much.
  std::int64_t level(base::MonoNanos now, std::int64_t taken) const;

  // The anchor: the bucket held `anchor_level()` at `anchor_at()` once smartlb had taken
  // `anchor_taken()`.
  base::MonoNanos anchor_at() const { return at_; }
  std::int64_t anchor_level() const { return level_at_; }
  std::int64_t anchor_taken() const { return taken_at_; }

 private:
  void add_sample(double rate, base::MonoNanos at);
  void forget(base::MonoNanos now);

  bool anchored_ = false;
  base::MonoNanos at_ = 0;                      // the last 429's moment (or a raise by `taken`)
  std::int64_t level_at_ = 0;                   // the bucket's level then
  std::int64_t taken_at_ = 0;                   // smartlb's sends, in all, counted there by then
  std::optional<base::MonoNanos> sample_from_;  // the last 429's moment, for the next sample
  std::int64_t sample_cost_ = 0, sample_taken_ = 0;
  std::array<double, kSamples> samples_{};
  std::size_t count_ = 0, next_ = 0;
  double rate_ = 0;
  base::MonoNanos doubted_until_ = 0;  // no sample is taken before then
  std::int64_t widest_ = 0;            // the widest gap a sample spanned since forgotten
  base::MonoNanos trial_from_ = 0;     // the rate was first given then
  base::Nanos trial_{0};               // for this long, 1.5 times the widest gap
  bool trusted_ = false;               // and has passed its trial
};

}  // namespace smartlb::routing
