#include "smartlb/credentials/entra/refresh_schedule.hpp"

#include <algorithm>

namespace smartlb::credentials::entra {

void RefreshSchedule::succeeded(base::MonoNanos now, base::MonoNanos expires) {
  fetched_ = true;
  last_fetch_ = now;
  has_token_ = true;
  expires_ = expires;
  failures_ = 0;
  const base::MonoNanos life = std::max<base::MonoNanos>(expires - now, 0);
  margin_ = std::min(t_.expiry_margin.count(), life / 4);
  const base::MonoNanos before = t_.refresh_before.count();
  next_fetch_ = life >= 2 * before ? expires - before : now + life / 2;
}

void RefreshSchedule::failed(base::MonoNanos now) {
  fetched_ = true;
  last_fetch_ = now;
  ++failures_;
  base::MonoNanos delay = t_.first_retry.count();
  for (unsigned i = 1; i < failures_ && delay < t_.max_retry.count(); ++i) delay *= 2;
  delay = std::min(delay, t_.max_retry.count());
  // While the token still works, retry within half of what is left of it, so that a few more
  // tries fit before it runs out (never sooner than the first retry delay).
  if (token_valid(now)) delay = std::min(delay, std::max((usable_until() - now) / 2, t_.first_retry.count()));
  next_fetch_ = now + delay;
}

void RefreshSchedule::refresh_requested(base::MonoNanos now) {
  if (!fetched_) return;  // the first fetch is under way
  next_fetch_ = std::min(next_fetch_, std::max(now, last_fetch_ + t_.min_forced_interval.count()));
}

}  // namespace smartlb::credentials::entra
