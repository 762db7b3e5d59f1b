#pragma once
// A sliding-window limiter gives back what it admitted exactly one window after admitting it.
// Where smartlb sends most of what a deployment admits, the refills are the echo of its own
// sends, one window later: in clumps where the sends were clumped, which no average rate
// predicts. The window is learned from 429s: each names a moment room returns (its
// Retry-After), which for a sliding window is the end of one of smartlb's own earlier sends'
// window; the one lag that explains many such moments is the window. A limiter of another
// kind (fixed windows, a token bucket) explains no single lag for long, and nothing is learned.
//
// Not thread-safe: ReportedBudget keeps it under its mutex. Pure: times are passed in.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/sliding_window_budget.hpp"

namespace smartlb::routing {

class RefillEcho {
 public:
  static constexpr std::size_t kSends = 512;                               // remembered
  static constexpr base::Nanos kTolerance = std::chrono::milliseconds(3);  // of a 429's moment
  static constexpr int kConfirmations = 5;                                 // moments a lag must explain
  static constexpr int kMaxConfirmations = 16;                             // strict: at most
  static constexpr base::Nanos kMinLag = std::chrono::milliseconds(100);
  static constexpr base::Nanos kMaxLag = std::chrono::seconds(120);

  // A request the backend took, sent at `at` with `tokens` (its estimate; 0: none was made, and
  // it counts as the average of the remembered sends that have one).
  void sent(base::MonoNanos at, std::int64_t tokens);
  // A 429 said room returns at `at`. `strict`: nothing else will check the lag (no reports
  // come): it must explain as many moments as make a chance match among the sends unlikely.
  void room_at(base::MonoNanos at, bool strict = false);
  // Between two reports (their requests sent at `from` and `to`), `tokens` came back: with a
  // lag, some of smartlb's sends in (from - lag, to - lag] left the window, or none did. Lags
  // that disagree are dropped; a learned window that disagrees three times in a row is
  // forgotten (someone else's sends, or no sliding window after all).
  void refilled(base::MonoNanos from, base::MonoNanos to, std::int64_t tokens);

  // Strict: the moments `candidates` lags must explain when a moment falls near some send by
  // chance with probability `chance`, so that one surviving by chance is a 1-in-1,000 event; 0
  // when even kMaxConfirmations would not do.
  static int confirmations_needed(std::size_t candidates, double chance);

  // The learned window, once one lag explained kConfirmations moments in a row (strict: as
  // many as confirmations_needed says).
  std::optional<base::Nanos> window() const { return window_; }

  // The next moments after `after` when smartlb's own sends leave the window, each with what
  // has come back by then in all (tokens, requests): at most `max` of them.
  struct Refill {
    base::MonoNanos at;
    std::int64_t tokens, requests;
  };
  std::vector<Refill> refills_after(base::MonoNanos after, std::size_t max) const;
  // What each of smartlb's own sends gives back after `after` by the learned window, oldest
  // first: its tokens (into `tokens`) and one request (into `requests`). Nothing when no window
  // is learned.
  void releases_after(base::MonoNanos after, std::vector<WindowRelease>& tokens,
                      std::vector<WindowRelease>& requests) const;
  // Whether the learned window is known and every send whose echo may come after `from` is
  // still remembered (a window longer than kSends sends is not).
  bool covers(base::MonoNanos from) const;
  // The tokens smartlb's own sends gave back in (from, to] by the learned window (0: none learned).
  std::int64_t refilled_between(base::MonoNanos from, base::MonoNanos to) const;
  // How many of them did (the requests given back).
  std::int64_t sends_between(base::MonoNanos from, base::MonoNanos to) const;

 private:
  struct Send {
    base::MonoNanos at;
    std::int64_t tokens;
  };
  using SendIt = std::deque<Send>::const_iterator;
  // The sends whose echo falls in (from, to] by the learned window (none: none learned).
  std::pair<SendIt, SendIt> echoed(base::MonoNanos from, base::MonoNanos to) const;
  bool explains(std::int64_t lag, base::MonoNanos moment) const;
  bool agrees(std::int64_t lag, base::MonoNanos from, base::MonoNanos to, std::int64_t tokens) const;
  void confirm();
  void forget();

  std::deque<Send> sends_;  // by time
  // The remembered sends with an estimate, and their tokens: what one without counts as.
  std::int64_t known_ = 0, known_tokens_ = 0;
  std::int64_t tokens_of(const Send& s) const;
  static constexpr base::MonoNanos kNothingSeen = std::numeric_limits<base::MonoNanos>::max();
  base::MonoNanos forgot_ = kNothingSeen;  // no send before this is known
  std::vector<std::int64_t> lags_;         // lags every moment since `confirmed_` was reset explains
  int confirmed_ = 0;
  int needed_ = kConfirmations;  // moments the candidate lags must explain
  base::MonoNanos last_moment_ = 0;
  int disagreements_ = 0;
  std::optional<base::Nanos> window_;
};

}  // namespace smartlb::routing
