#pragma once
// One replica's side of a quota that several replicas share through a store (Redis): the store
// counts, per window of the quota's length aligned on the wall clock (Unix epoch multiples),
// every token it granted to any replica, and never grants past the limit. A replica admits
// requests only from what it was granted for the window (its lease), asks for more ahead of
// need -- and for the next window before this one ends -- and never waits on the store on the
// request path. When the store is lost, the replica counts locally against its share: the
// limit divided by the replicas it last knew of.
//
// Not thread-safe (the owner's lock serialises it) and free of I/O: the owner sends what
// ask() returns to the store and hands the answer to granted(). Pure: the time is passed in.
#include <chrono>
#include <cstdint>
#include <optional>

#include "smartlb/base/clock.hpp"

namespace smartlb {

class LeasedQuota {
 public:
  using WallTime = std::chrono::system_clock::time_point;

  struct Options {
    std::int64_t limit = 0;  // per window, all replicas together
    Nanos window = std::chrono::minutes(1);
    // A lease covers about this much of the replica's own traffic: small enough that what a
    // replica holds unused at the end of a window is a sliver of the quota, large enough
    // that the store sees a few asks a second at most.
    Nanos horizon = std::chrono::milliseconds(500);
    std::int64_t min_lease = 1;  // at least one request's worth, usually
    // Shared, but the store has not answered yet for the current window (a replica's first
    // requests, the first ones after the store returns, a window no lease was asked ahead
    // for): take up to one lease's worth (never more than the local share) without one, and
    // report it with the ask, instead of refusing every request until the answer arrives.
    bool bridge = false;
  };

  explicit LeasedQuota(Options o) : o_(o) {}
  void set_limit(std::int64_t limit) { o_.limit = limit; }
  std::int64_t limit() const { return o_.limit; }

  // Shared (the store answers) or local (lost: the limit divided by `replicas`).
  void set_shared(bool shared, std::size_t replicas);
  bool shared() const { return shared_; }

  std::int64_t window_of(WallTime t) const;
  WallTime window_end(std::int64_t window) const;

  // Takes `cost` tokens for a request at `now`: from the lease of the current window (shared)
  // or from the local share. False: not enough; nothing is taken.
  bool try_take(std::int64_t cost, WallTime now);
  // Whether try_take(cost, now) would succeed (nothing changes).
  bool fits(std::int64_t cost, WallTime now) const;
  // False only when `cost` cannot fit before the window ends (over the local share, more than
  // the limit, or the store said the window is spent). Otherwise a lease may still come: a
  // pick should try (and so ask), not skip.
  bool may_fit(std::int64_t cost, WallTime now) const;
  // How long until `cost` may fit: 0 when it fits; the window's end when the window is spent
  // (locally, or the store granted less than asked); else the horizon (a lease is on its way).
  Nanos wait_for(std::int64_t cost, WallTime now) const;
  // Corrects what a request took in `window` (its real cost, once known). Only the replica's
  // own count moves: the store keeps what it granted.
  void adjust(std::int64_t window, std::int64_t delta);

  // What to ask the store for now, if anything: `tokens` more for `window`, reporting `used`
  // tokens taken in it beyond what was granted (after running locally, so the store learns
  // what this replica spent while it was away). One ask at a time; `need` is the cost of a
  // request just refused (the ask covers it).
  struct Ask {
    std::int64_t window = 0;
    std::int64_t tokens = 0;
    std::int64_t used = 0;
  };
  std::optional<Ask> ask(WallTime now, std::int64_t need = 0);
  // The store's answer to `a`: `tokens` granted (0 when the window's quota is spent).
  void granted(const Ask& a, std::int64_t tokens, WallTime now);
  // The ask got no answer (the store is being lost): another may be made.
  void ask_failed() { in_flight_ = false; }

  // For status pages and tests.
  struct View {
    std::int64_t window = -1, leased = 0, taken = 0;
    std::int64_t next_leased = 0;  // granted ahead for the next window
    bool in_flight = false;
  };
  View view() const { return {cur_.window, cur_.leased, cur_.taken, next_.leased, in_flight_}; }

 private:
  struct Slot {
    std::int64_t window = -1;
    std::int64_t leased = 0;    // granted by the store (shared mode)
    std::int64_t taken = 0;     // taken by requests
    std::int64_t reported = 0;  // of `taken` beyond `leased`, already told to the store
    bool answered = false;      // the store answered an ask for this window (shared mode)
    bool spent = false;         // it granted less than asked: the window's quota is (nearly) gone
    std::int64_t bridged = 0;   // taken while shared before any answer (Options::bridge)
  };
  void roll(std::int64_t window);  // makes `window` the current one
  std::int64_t local_share() const;
  const Slot* slot_of(std::int64_t window) const;  // null: a window not begun here yet
  bool room_for(const Slot& s, std::int64_t cost) const;
  bool bridging(const Slot& s) const { return shared_ && o_.bridge && !s.answered; }
  std::int64_t lease_size(std::int64_t need) const;

  Options o_;
  bool shared_ = false;
  std::size_t replicas_ = 1;
  Slot cur_, next_;
  bool in_flight_ = false;
  std::int64_t last_lease_ = 0;
  // Tokens taken per second, an exponentially weighted mean (for the lease size).
  double rate_ = 0;
  WallTime rate_at_{};
  std::int64_t rate_tokens_ = 0;
  double avg_cost_ = 0;  // of a request, an exponentially weighted mean
};

}  // namespace smartlb
