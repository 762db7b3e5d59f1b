#include "smartlb/routing/refill_echo.hpp"

#include <algorithm>
#include <iterator>

namespace smartlb::routing {

void RefillEcho::sent(base::MonoNanos at, std::int64_t tokens) {
  // Answers come back out of order: keep the sends by the time they left.
  auto it = sends_.end();
  while (it != sends_.begin() && std::prev(it)->at > at) --it;
  sends_.insert(it, Send{at, tokens});
  if (sends_.size() > kSends) sends_.pop_front();
}

bool RefillEcho::explains(std::int64_t lag, base::MonoNanos moment) const {
  const base::MonoNanos from = moment - lag - kTolerance.count();
  const auto it = std::lower_bound(sends_.begin(), sends_.end(), from,
                                   [](const Send& s, base::MonoNanos t) { return s.at < t; });
  return it != sends_.end() && it->at <= moment - lag + kTolerance.count();
}

void RefillEcho::room_at(base::MonoNanos moment) {
  // Answers that crossed one another name the same moment: it counts once.
  if (last_moment_ != 0 && moment - last_moment_ <= kTolerance.count() &&
      last_moment_ - moment <= kTolerance.count())
    return;
  last_moment_ = moment;
  if (window_) {
    if (explains(window_->count(), moment)) return;
    window_.reset();  // contradicted: start again from this moment
    lags_.clear();
  }
  if (!lags_.empty()) {
    std::erase_if(lags_, [&](std::int64_t lag) { return !explains(lag, moment); });
    if (!lags_.empty()) {
      confirm();
      return;
    }
  }
  // Every send could be the one whose window ends then.
  for (const Send& s : sends_) {
    const std::int64_t lag = moment - s.at;
    if (lag >= kMinLag.count() && lag <= kMaxLag.count()) lags_.push_back(lag);
  }
  std::sort(lags_.begin(), lags_.end());
  confirmed_ = lags_.empty() ? 0 : 1;
}

void RefillEcho::confirm() {
  ++confirmed_;
  if (confirmed_ >= kConfirmations && lags_.back() - lags_.front() <= 2 * kTolerance.count()) {
    window_ = base::Nanos(lags_[lags_.size() / 2]);
    disagreements_ = 0;
  }
}

bool RefillEcho::agrees(std::int64_t lag, base::MonoNanos from, base::MonoNanos to,
                        std::int64_t tokens) const {
  // Did any send leave the window between the two reports (give or take the tolerance)?
  const auto first = std::upper_bound(sends_.begin(), sends_.end(), from - lag + kTolerance.count(),
                                      [](base::MonoNanos t, const Send& s) { return t < s.at; });
  const bool left = first != sends_.end() && first->at <= to - lag - kTolerance.count();
  const auto wide = std::upper_bound(sends_.begin(), sends_.end(), from - lag - kTolerance.count(),
                                     [](base::MonoNanos t, const Send& s) { return t < s.at; });
  const bool may_have_left = wide != sends_.end() && wide->at <= to - lag + kTolerance.count();
  return tokens > 0 ? may_have_left : !left;
}

void RefillEcho::refilled(base::MonoNanos from, base::MonoNanos to, std::int64_t tokens) {
  if (sends_.empty() || to - from <= 2 * kTolerance.count()) return;  // too close to tell
  if (window_) {
    disagreements_ = agrees(window_->count(), from, to, tokens) ? 0 : disagreements_ + 1;
    if (disagreements_ >= 3) {
      window_.reset();
      lags_.clear();
      confirmed_ = 0;
    }
    return;
  }
  if (lags_.empty()) return;  // candidates come from a 429's moment
  std::erase_if(lags_, [&](std::int64_t lag) { return !agrees(lag, from, to, tokens); });
  if (lags_.empty())
    confirmed_ = 0;
  else
    confirm();
}

std::vector<RefillEcho::Refill> RefillEcho::refills_after(base::MonoNanos after, std::size_t max) const {
  std::vector<Refill> out;
  if (!window_) return out;
  const std::int64_t w = window_->count();
  auto it = std::upper_bound(sends_.begin(), sends_.end(), after - w,
                             [](base::MonoNanos t, const Send& s) { return t < s.at; });
  std::int64_t tokens = 0, requests = 0;
  for (; it != sends_.end() && out.size() < max; ++it) {
    tokens += it->tokens;
    ++requests;
    out.push_back(Refill{it->at + w, tokens, requests});
  }
  return out;
}

}  // namespace smartlb::routing
