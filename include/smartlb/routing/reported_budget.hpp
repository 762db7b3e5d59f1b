#pragma once
// What a backend last said about its own rate limit for one deployment
// (`x-ratelimit-remaining-tokens` / `-requests`, on every answer), minus what smartlb sent
// there since, and when that window can have refilled. A request whose estimate does not fit
// is routed elsewhere until then, without waiting for the 429 (a soft skip: no cooldown).
//
// When the window refills, in order of preference:
//   * the report's own reset hint (`x-ratelimit-reset-*`, OpenAI): the time it names;
//   * a learned window boundary: a quota window of `window` (QUOTA_WINDOW_SECONDS) repeating
//     from an anchor, set by a 429's Retry-After (the moment the backend said its window
//     ends) or by a report whose remaining rose over the previous one by more than a quarter
//     of the most ever reported (a window began between the two sends). The anchor is kept while it explains
//     what the backend reports. The skip never outlasts a whole `window` after the report for tokens (Azure
//     enforces TPM per minute), nor min(window, 10 s) for requests (Azure enforces RPM over 1 s or 10 s);
//   * no hint and no anchor yet: no skip. Skipping a whole window instead (the bound above)
//     was measured to cost each backend up to one window of its capacity, while letting the
//     request through costs at most one 429 per deployment, whose Retry-After is the anchor
//     (docs/benchmarks.md, quota goodput).
// Thread-safe: the request path reads atomics and, only while the budget is low (`watched`),
// adds its cost to two atomic counters; reports take a mutex of this deployment.
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/throttle_headers.hpp"

namespace smartlb {

class ReportedBudget {
 public:
  // Below either of these remaining counts a deployment is watched: requests to it are
  // estimated and counted. Above both, a request's estimate cannot matter (larger requests
  // than this are left to the backend's 429).
  static constexpr std::int64_t kWatchBelowTokens = 65'536;
  static constexpr std::int64_t kWatchBelowRequests = 64;
  // The longest an RPM interval lasts on Azure.
  static constexpr Nanos kRequestWindowCap = std::chrono::seconds(10);

  // What smartlb had sent there when a request left (its own cost included).
  struct Mark {
    std::int64_t tokens = 0, requests = 0;
  };

  static bool is_low(const RateLimitReport& r) {
    return (r.remaining_tokens && *r.remaining_tokens < kWatchBelowTokens) ||
           (r.remaining_requests && *r.remaining_requests < kWatchBelowRequests);
  }

  bool watched() const { return watched_.load(std::memory_order_relaxed); }

  // Counts a request of `cost` tokens sent now (only while watched; otherwise free).
  Mark charge(std::int64_t cost);

  // A report from the answer to a request sent at `sent` with `mark`. Older reports than the
  // last one taken are ignored. Returns how `watched()` changed: +1, -1 or 0.
  int observe(const RateLimitReport& r, MonoNanos sent, Mark mark, Nanos window);

  // A 429 said the backend's window ends at `at` (a hint no longer than `window`): the anchor.
  void window_ends_at(MonoNanos at, Nanos window);

  // Whether `cost` tokens (at least 1) and one request fit at `now` by the last report.
  bool fits(std::int64_t cost, MonoNanos now) const;
  // The soonest time at or after `now` when `cost` fits.
  MonoNanos fits_at(std::int64_t cost, MonoNanos now) const;

  struct View {
    bool watched = false;
    std::int64_t tokens_left = -1, requests_left = -1;  // -1: no limiting report
    MonoNanos tokens_until = 0, requests_until = 0;
  };
  View view(MonoNanos now) const;

  // The first boundary of a window of length `window` through `anchor` strictly after `t`.
  static MonoNanos next_boundary(MonoNanos anchor, Nanos window, MonoNanos t);

 private:
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  MonoNanos refill_at(MonoNanos sent, Nanos window, Nanos cap) const;  // under mutex_
  void note_rise(MonoNanos sent);                                      // under mutex_

  std::atomic<bool> watched_{false};
  std::atomic<std::int64_t> sent_tokens_{0}, sent_requests_{0};
  // remaining as reported + what we had sent then: remaining now = base - sent_*.
  std::atomic<std::int64_t> token_base_{kNone}, request_base_{kNone};
  std::atomic<MonoNanos> tokens_until_{0}, requests_until_{0};

  std::mutex mutex_;  // reports and anchors
  MonoNanos last_sent_ = std::numeric_limits<MonoNanos>::min();
  bool tokens_hinted_ = false, requests_hinted_ = false;  // the untils came from reset hints
  std::int64_t last_tokens_ = -1, last_requests_ = -1;    // raw values of the last report
  std::int64_t peak_tokens_ = 0, peak_requests_ = 0;      // the most ever reported
  bool anchored_ = false;
  MonoNanos anchor_ = 0;
  Nanos window_{0};
};

}  // namespace smartlb
