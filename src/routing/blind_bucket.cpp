#include "smartlb/routing/blind_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace smartlb::routing {

namespace {
// A level's refill over a long idle spell is capped here: it only has to say "plenty".
constexpr double kMaxRefill = 1e15;
}  // namespace

void BlindBucket::refused(base::MonoNanos sent, base::MonoNanos fits_at, std::int64_t cost,
                          std::int64_t taken) {
  if (rate_ > 0 && rate_ * static_cast<double>(fits_at - sent - kLateBy.count()) >
                       kShortByAtMost * static_cast<double>(cost)) {
    forget(fits_at);  // short by more than a bucket can be: no bucket (or not the rate learned)
  }
  anchored_ = true;
  at_ = fits_at;
  level_at_ = cost;
  taken_at_ = taken;
  if (fits_at < doubted_until_) return;  // caught being no bucket: nothing is learned for a while
  if (sample_from_) {
    const std::int64_t gap = fits_at - *sample_from_;
    // 429s that crossed one another name (about) the same moment: the sample is measured later,
    // from the earlier one.
    if (gap < kMinGap.count()) return;
    if (gap <= kMaxGap.count()) {
      const std::int64_t back = cost - sample_cost_ + (taken - sample_taken_);
      if (back > 0) {
        widest_ = std::max(widest_, gap);
        add_sample(static_cast<double>(back) / static_cast<double>(gap), fits_at);
      }
    }
  }
  sample_from_ = fits_at;
  sample_cost_ = cost;
  sample_taken_ = taken;
}

void BlindBucket::taken(base::MonoNanos at, std::int64_t cost, std::int64_t taken) {
  if (!anchored_ || rate_ <= 0) return;
  // Since the anchor a bucket can have given at most its level then plus its refill since: what
  // was taken beyond that level proves a refill of at least `least`.
  const base::MonoNanos since = at - at_;
  double least = 0;
  if (since >= kMinGap.count()) {
    least = static_cast<double>(cost + (taken - taken_at_) - level_at_) / static_cast<double>(since);
    if (least > kOffBy * rate_) {
      forget(at);  // given back at once what a bucket refills over time (a window's boundary)
      return;
    }
  }
  if (!trusted_ && at >= trial_from_ + trial_.count()) trusted_ = true;
  if (!known() || level(at, taken) >= cost) return;
  if (least > rate_) {  // the rate was learned low
    add_sample(least, at);
    rate_ = std::max(rate_, least);
  }
  at_ = at;
  level_at_ = cost;
  taken_at_ = taken;
}

std::int64_t BlindBucket::level(base::MonoNanos now, std::int64_t taken) const {
  const double refill = std::clamp(rate_ * static_cast<double>(now - at_), -kMaxRefill, kMaxRefill);
  return level_at_ + static_cast<std::int64_t>(std::floor(refill)) - (taken - taken_at_);
}

void BlindBucket::forget(base::MonoNanos now) {
  doubted_until_ = now + kDoubtFor.count();
  trusted_ = false;
  widest_ = 0;
  sample_from_.reset();
  count_ = 0;
  next_ = 0;
  rate_ = 0;
}

void BlindBucket::add_sample(double rate, base::MonoNanos at) {
  samples_[next_] = rate;
  next_ = (next_ + 1) % kSamples;
  count_ = std::min(count_ + 1, kSamples);
  if (count_ < kMinSamples) return;
  std::array<double, kSamples> sorted = samples_;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(count_));
  if (rate_ == 0) {
    // A window that gave these samples gave them a window apart: one more passes a boundary.
    trial_from_ = at;
    trial_ = base::Nanos(widest_ + widest_ / 2);
  }
  rate_ = sorted[count_ / 2];  // the median
}

}  // namespace smartlb::routing
