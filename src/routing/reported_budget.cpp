#include "smartlb/routing/reported_budget.hpp"

#include <algorithm>

namespace smartlb {

MonoNanos ReportedBudget::next_boundary(MonoNanos anchor, Nanos window, MonoNanos t) {
  const std::int64_t w = window.count();
  if (w <= 0) return t;
  if (t >= anchor) return anchor + ((t - anchor) / w + 1) * w;
  return anchor - ((anchor - t - 1) / w) * w;
}

ReportedBudget::Mark ReportedBudget::charge(std::int64_t cost) {
  if (!watched()) {
    return {sent_tokens_.load(std::memory_order_relaxed), sent_requests_.load(std::memory_order_relaxed)};
  }
  return {sent_tokens_.fetch_add(cost, std::memory_order_relaxed) + cost,
          sent_requests_.fetch_add(1, std::memory_order_relaxed) + 1};
}

MonoNanos ReportedBudget::refill_at(MonoNanos sent, Nanos window, Nanos cap) const {
  // Not knowing where the window ends, skip nothing: the 429 that follows names its end.
  if (!anchored_) return sent;
  return std::min(next_boundary(anchor_, window, sent), sent + std::min(window, cap).count());
}

void ReportedBudget::note_rise(MonoNanos sent) {
  // A window began in (last_sent_, sent]. An anchor with a boundary there still explains it;
  // otherwise this send is the earliest moment known to be in the new window (never early).
  if (anchored_ && next_boundary(anchor_, window_, last_sent_) <= sent) return;
  anchored_ = true;
  anchor_ = sent;
}

int ReportedBudget::observe(const RateLimitReport& r, MonoNanos sent, Mark mark, Nanos window) {
  if (r.empty()) return 0;
  std::lock_guard lock(mutex_);
  if (sent < last_sent_) return 0;  // an answer to an older request than one already taken
  window_ = window;
  // Within one window what remains only falls; a rise means a new window began. Answers on
  // different connections can reach the backend in another order than they left, so a rise
  // counts only past a quarter of the most ever reported (a refill brings back most of it).
  if (r.remaining_tokens) peak_tokens_ = std::max(peak_tokens_, *r.remaining_tokens);
  if (r.remaining_requests) peak_requests_ = std::max(peak_requests_, *r.remaining_requests);
  if (r.remaining_tokens ? (last_tokens_ >= 0 && *r.remaining_tokens - last_tokens_ > peak_tokens_ / 4)
                         : (last_requests_ >= 0 && r.remaining_requests &&
                            *r.remaining_requests - last_requests_ > peak_requests_ / 4))
    note_rise(sent);
  last_sent_ = sent;
  last_tokens_ = r.remaining_tokens.value_or(-1);
  last_requests_ = r.remaining_requests.value_or(-1);

  const bool low = is_low(r);
  if (low) {
    token_base_.store(r.remaining_tokens ? *r.remaining_tokens + mark.tokens : kNone,
                      std::memory_order_relaxed);
    request_base_.store(r.remaining_requests ? *r.remaining_requests + mark.requests : kNone,
                        std::memory_order_relaxed);
    tokens_hinted_ = r.reset_tokens.has_value();
    requests_hinted_ = r.reset_requests.has_value();
    tokens_until_.store(
        r.reset_tokens ? sent + Nanos(*r.reset_tokens).count() : refill_at(sent, window, window),
        std::memory_order_relaxed);
    requests_until_.store(r.reset_requests ? sent + Nanos(*r.reset_requests).count()
                                           : refill_at(sent, window, kRequestWindowCap),
                          std::memory_order_relaxed);
  } else {
    token_base_.store(kNone, std::memory_order_relaxed);
    request_base_.store(kNone, std::memory_order_relaxed);
  }
  const bool was = watched_.exchange(low, std::memory_order_relaxed);
  return static_cast<int>(low) - static_cast<int>(was);
}

void ReportedBudget::window_ends_at(MonoNanos at, Nanos window) {
  std::lock_guard lock(mutex_);
  anchored_ = true;
  anchor_ = at;
  window_ = window;
  if (last_sent_ == std::numeric_limits<MonoNanos>::min()) return;
  // The last report's window ends at the boundary after its send (a reset hint knew better).
  const MonoNanos end = next_boundary(anchor_, window_, last_sent_);
  if (!tokens_hinted_)
    tokens_until_.store(std::min(end, last_sent_ + window_.count()), std::memory_order_relaxed);
  if (!requests_hinted_)
    requests_until_.store(std::min(end, last_sent_ + std::min(window_, kRequestWindowCap).count()),
                          std::memory_order_relaxed);
}

bool ReportedBudget::fits(std::int64_t cost, MonoNanos now) const { return fits_at(cost, now) == now; }

MonoNanos ReportedBudget::fits_at(std::int64_t cost, MonoNanos now) const {
  if (!watched()) return now;
  MonoNanos at = now;
  const std::int64_t tokens = token_base_.load(std::memory_order_relaxed);
  if (tokens != kNone &&
      tokens - sent_tokens_.load(std::memory_order_relaxed) < std::max<std::int64_t>(cost, 1))
    at = std::max(at, tokens_until_.load(std::memory_order_relaxed));
  const std::int64_t requests = request_base_.load(std::memory_order_relaxed);
  if (requests != kNone && requests - sent_requests_.load(std::memory_order_relaxed) < 1)
    at = std::max(at, requests_until_.load(std::memory_order_relaxed));
  return at;
}

ReportedBudget::View ReportedBudget::view(MonoNanos now) const {
  View v;
  v.watched = watched();
  if (!v.watched) return v;
  v.tokens_until = tokens_until_.load(std::memory_order_relaxed);
  v.requests_until = requests_until_.load(std::memory_order_relaxed);
  const std::int64_t tokens = token_base_.load(std::memory_order_relaxed);
  const std::int64_t requests = request_base_.load(std::memory_order_relaxed);
  if (tokens != kNone && now < v.tokens_until)
    v.tokens_left = tokens - sent_tokens_.load(std::memory_order_relaxed);
  if (requests != kNone && now < v.requests_until)
    v.requests_left = requests - sent_requests_.load(std::memory_order_relaxed);
  return v;
}

}  // namespace smartlb
