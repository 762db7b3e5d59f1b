#include "smartlb/routing/refill_echo.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace smartlb::routing {

void RefillEcho::sent(base::MonoNanos at, std::int64_t tokens) {
  // Answers come back out of order: keep the sends by the time they left.
  if (forgot_ == kNothingSeen) forgot_ = at - 1;  // nothing before the first is known
  auto it = sends_.end();
  while (it != sends_.begin() && std::prev(it)->at > at) --it;
  sends_.insert(it, Send{at, tokens});
  if (tokens > 0) {
    known_tokens_ += tokens;
    ++known_;
  }
  if (sends_.size() > kSends) {
    forgot_ = sends_.front().at;
    if (sends_.front().tokens > 0) {
      known_tokens_ -= sends_.front().tokens;
      --known_;
    }
    sends_.pop_front();
  }
}

std::int64_t RefillEcho::tokens_of(const Send& s) const {
  if (s.tokens > 0 || known_ == 0) return s.tokens;
  return (known_tokens_ + known_ / 2) / known_;
}

bool RefillEcho::explains(std::int64_t lag, base::MonoNanos moment) const {
  const base::MonoNanos from = moment - lag - kTolerance.count();
  const auto it = std::lower_bound(sends_.begin(), sends_.end(), from,
                                   [](const Send& s, base::MonoNanos t) { return s.at < t; });
  return it != sends_.end() && it->at <= moment - lag + kTolerance.count();
}

void RefillEcho::room_at(base::MonoNanos moment, bool strict) {
  // Answers that crossed one another name the same moment: it counts once.
  if (last_moment_ != 0 && moment - last_moment_ <= kTolerance.count() &&
      last_moment_ - moment <= kTolerance.count())
    return;
  last_moment_ = moment;
  if (window_) {
    if (explains(window_->count(), moment)) {
      if (strict) disagreements_ = 0;
      return;
    }
    // Contradicted: start again from this moment. Strict: only at the third in a row, as a
    // window learned from moments alone took many of them, and one late answer is no proof.
    if (strict && ++disagreements_ < 3) return;
    forget();
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
  needed_ = kConfirmations;
  if (strict && sends_.size() > 1 && !lags_.empty()) {
    // A moment falls within kTolerance of some send by chance with this probability.
    const double span = static_cast<double>(sends_.back().at - sends_.front().at) + 1;
    const double chance =
        static_cast<double>(sends_.size()) * 2 * static_cast<double>(kTolerance.count()) / span;
    needed_ = confirmations_needed(lags_.size(), chance);
    if (needed_ == 0) {  // too many sends to tell one lag from chance
      lags_.clear();
      confirmed_ = 0;
    }
  }
}

int RefillEcho::confirmations_needed(std::size_t candidates, double chance) {
  // The first moment made the candidates; each later one keeps a wrong one with `chance`.
  double wrong = static_cast<double>(candidates) * std::pow(std::min(chance, 1.0), kConfirmations - 1);
  int needed = kConfirmations;
  for (; wrong > 1e-3; ++needed) {
    if (needed == kMaxConfirmations) return 0;
    wrong *= chance;
  }
  return needed;
}

void RefillEcho::confirm() {
  ++confirmed_;
  if (confirmed_ >= needed_ && lags_.back() - lags_.front() <= 2 * kTolerance.count()) {
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

void RefillEcho::forget() {
  window_.reset();
  lags_.clear();
  confirmed_ = 0;
}

void RefillEcho::refilled(base::MonoNanos from, base::MonoNanos to, std::int64_t tokens) {
  if (sends_.empty() || to - from <= 2 * kTolerance.count()) return;  // too close to tell
  if (window_) {
    disagreements_ = agrees(window_->count(), from, to, tokens) ? 0 : disagreements_ + 1;
    if (disagreements_ >= 3) forget();
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
    tokens += tokens_of(*it);
    ++requests;
    out.push_back(Refill{it->at + w, tokens, requests});
  }
  return out;
}

void RefillEcho::releases_after(base::MonoNanos after, std::vector<WindowRelease>& tokens,
                                std::vector<WindowRelease>& requests) const {
  if (!window_) return;
  const std::int64_t w = window_->count();
  auto it = std::upper_bound(sends_.begin(), sends_.end(), after - w,
                             [](base::MonoNanos t, const Send& s) { return t < s.at; });
  for (; it != sends_.end(); ++it) {
    const base::Nanos in(it->at + w - after);
    tokens.push_back({in, tokens_of(*it)});
    requests.push_back({in, 1});
  }
}

bool RefillEcho::covers(base::MonoNanos from) const { return window_ && from - window_->count() >= forgot_; }

std::pair<RefillEcho::SendIt, RefillEcho::SendIt> RefillEcho::echoed(base::MonoNanos from,
                                                                     base::MonoNanos to) const {
  if (!window_ || to <= from) return {sends_.end(), sends_.end()};
  const std::int64_t w = window_->count();
  const auto after = [](base::MonoNanos t, const Send& s) { return t < s.at; };
  const auto it = std::upper_bound(sends_.begin(), sends_.end(), from - w, after);
  return {it, std::upper_bound(it, sends_.end(), to - w, after)};
}

std::int64_t RefillEcho::refilled_between(base::MonoNanos from, base::MonoNanos to) const {
  const auto [begin, end] = echoed(from, to);
  std::int64_t tokens = 0;
  for (auto it = begin; it != end; ++it) tokens += tokens_of(*it);
  return tokens;
}

std::int64_t RefillEcho::sends_between(base::MonoNanos from, base::MonoNanos to) const {
  const auto [begin, end] = echoed(from, to);
  return end - begin;
}

}  // namespace smartlb::routing
