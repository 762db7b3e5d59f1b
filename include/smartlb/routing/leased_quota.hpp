#pragma once
// One replica's side of a quota that several replicas share through a store (Redis). The
// quota's window W is split into `subwindows` (k) sub-windows aligned on the wall clock (Unix
// epoch multiples of W / k); the store counts, per sub-window, every token it granted to any
// replica, and grants in a sub-window only what leaves the sum of it and the k before it (and
// any counted ahead) within the limit. Any interval of length W lies within k + 1 consecutive
// sub-windows, so none -- and no fixed window of a backend's own, however aligned -- sees more
// than the limit granted (a late report of what was taken beyond leases aside). With k = 1 the
// windows are fixed ones (a UTC day). A replica admits requests only from what it was granted
// for the current sub-window (its lease; leftovers lapse at the sub-window's end), asks for more
// ahead of need -- and for the next sub-window before this one ends -- and never waits on the
// store on the request path. When the store is lost, the replica counts locally against its
// share, the limit divided by the replicas it last knew of, over the same k + 1 sub-windows.
//
// A sub-window is named by its index (`subwindow`), Unix epoch / (W / k).
//
// Not thread-safe (the owner's lock serialises it) and free of I/O: the owner sends what
// ask() returns to the store and hands the answer to granted(). Pure: the time is passed in.
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

class LeasedQuota {
 public:
  using WallTime = std::chrono::system_clock::time_point;
  static constexpr int kDefaultSubwindows = 50;

  struct Options {
    std::int64_t limit = 0;  // per window, all replicas together
    base::Nanos window = std::chrono::minutes(1);
    // A lease covers about this much of the replica's own traffic: small enough that what a
    // replica holds unused at the end of a window is a sliver of the quota, large enough
    // that the store sees a few asks a second at most.
    base::Nanos horizon = std::chrono::milliseconds(500);
    std::int64_t min_lease = 1;  // at least one request's worth, usually
    // Shared, but the store has not answered yet for the current window (a replica's first
    // requests, the first ones after the store returns, a window no lease was asked ahead
    // for): take up to one lease's worth (never more than the local share) without one, and
    // report it with the ask, instead of refusing every request until the answer arrives.
    // Not while the quota is contested (the store said a sub-window counted with the current
    // one was spent): credit there would go beyond the limit.
    bool bridge = false;
    // Sub-windows per window: 1 for fixed windows; more waste less (the store counts a
    // sub-window a whole window after its end: up to 1 / (k + 1) of the limit is counted twice).
    int subwindows = kDefaultSubwindows;
    // Calendar months in UTC instead of fixed windows (`window` then only sizes the store's
    // expiry; one sub-window: a month is a fixed window of its own length).
    bool calendar_months = false;
  };

  explicit LeasedQuota(Options o);
  void set_limit(std::int64_t limit) { o_.limit = limit; }
  std::int64_t limit() const { return o_.limit; }

  // Shared (the store answers) or local (lost: the limit divided by `replicas`).
  void set_shared(bool shared, std::size_t replicas);
  bool shared() const { return shared_; }

  std::int64_t subwindow_of(WallTime t) const;  // the sub-window's index
  WallTime subwindow_end(std::int64_t subwindow) const;
  int subwindows() const { return o_.subwindows; }
  // The first sub-window the store counts with `subwindow`'s grant: k before it (none when fixed).
  std::int64_t counted_from(std::int64_t subwindow) const {
    return o_.subwindows > 1 ? subwindow - o_.subwindows : subwindow;
  }

  // Takes `cost` tokens for a request at `now`: from the lease of the current sub-window
  // (shared) or from the local share (what the last k + 1 sub-windows took counts). False: not
  // enough; nothing is taken.
  bool try_take(std::int64_t cost, WallTime now);
  // Whether try_take(cost, now) would succeed (nothing changes).
  bool fits(std::int64_t cost, WallTime now) const;
  // False only when `cost` cannot fit before the sub-window ends (over the local share, more
  // than the limit, or the store said the sub-window is spent). Otherwise a lease may still
  // come: a pick should try (and so ask), not skip.
  bool may_fit(std::int64_t cost, WallTime now) const;
  // How long until `cost` may fit: 0 when it fits; local, until enough of the oldest counted
  // sub-windows are forgotten (a whole window when it never fits); shared and spent (the store
  // granted less than asked), the sub-window's end; else the horizon (a lease is on its way).
  base::Nanos wait_for(std::int64_t cost, WallTime now) const;
  // Corrects what a request took in `subwindow` (its real cost, once known). Only the replica's
  // own count moves: the store keeps what it granted.
  void adjust(std::int64_t subwindow, std::int64_t delta);

  // What to ask the store for now, if anything: `tokens` more for `subwindow`, reporting `used`
  // tokens taken beyond what was granted in it and in the sub-windows still counted with it
  // (after running locally, so the store learns what this replica spent while it was away;
  // the store counts all of it in `subwindow`). One ask at a time; `need` is the cost of a
  // request just refused (the ask covers it).
  struct Ask {
    std::int64_t subwindow = 0;
    std::int64_t tokens = 0;
    std::int64_t used = 0;
    std::int64_t earlier = 0;  // of `used`, taken in the sub-windows before `subwindow`
    // What a sub-window that ended (`returned_subwindow`) left unused of its leases: the store
    // no longer counts it there (nothing can be taken from it any more), so it is granted again.
    std::int64_t returned_subwindow = 0;
    std::int64_t returned = 0;
  };
  std::optional<Ask> ask(WallTime now, std::int64_t need = 0);
  // The store's answer to `a`: `tokens` granted (0 when the sub-window's quota is spent) and,
  // when it says so, `counted`: what every replica holds or took of the window (grants and
  // reports, this one included) once it granted, and `oldest`: the earliest sub-window in which
  // it counts any of that (-1: none).
  void granted(const Ask& a, std::int64_t tokens, WallTime now, std::int64_t counted = -1,
               std::int64_t oldest = -1);
  // What this replica may take now without taking what no other replica holds yet: what the
  // store left unheld at its last answer, plus what this replica holds and has not taken. What
  // a priority class below the first checks its reserve against (routing/class_reserve.hpp):
  // with several replicas, its own lease says nothing of what the others still need. Nullopt
  // when not known: local, or no answer since the sub-window before this one or for
  // kCountFreshFor (with hour-long windows a sub-window lasts 72 s: the others move on sooner).
  std::optional<std::int64_t> left_everywhere(WallTime now) const;
  static constexpr std::chrono::seconds kCountFreshFor{2};
  // How long until the store gives room back: until the oldest sub-window it counted any of the
  // window in at its last answer stops counting. What the classes above a lower one may ask for
  // meanwhile is what that one leaves them (the same horizon as a declared budget's own window,
  // seen across replicas). Nullopt when not known, as left_everywhere, or when nothing counts.
  std::optional<base::Nanos> until_store_release(WallTime now) const;
  // The ask got no answer (the store is being lost): another may be made.
  void ask_failed() { in_flight_ = false; }

  // For status pages and tests.
  struct View {
    std::int64_t subwindow = -1, leased = 0, taken = 0;
    std::int64_t next_leased = 0;  // granted ahead for the next sub-window
    bool in_flight = false;
    bool shared = false;  // leased from the store (else: the local share)
    // What every replica held or took of the window at the store's last answer; -1: unknown.
    std::int64_t counted = -1;
    std::int64_t oldest_counted = -1;  // ... the earliest sub-window it counted any in; -1: none or unknown
  };
  View view() const;

 private:
  struct Slot {
    std::int64_t subwindow = -1;
    std::int64_t leased = 0;    // granted by the store (shared mode), less what went back
    std::int64_t taken = 0;     // taken by requests
    std::int64_t reported = 0;  // of `taken` beyond `leased`, already told to the store
    bool answered = false;      // the store answered an ask for this sub-window (shared mode)
    bool spent = false;         // it granted less than asked: the sub-window's quota is (nearly) gone
    std::int64_t bridged = 0;   // taken while shared before any answer (Options::bridge)
  };
  std::int64_t now_subwindow(WallTime now) const;          // never before the latest seen (clock steps back)
  Slot& slot(std::int64_t subwindow);                      // made (empty) if the ring held an older one
  const Slot* slot_of(std::int64_t subwindow) const;       // null: a sub-window not begun here
  std::int64_t local_taken(std::int64_t subwindow) const;  // in the k + 1 sub-windows to `subwindow`
  std::int64_t local_share() const;
  bool room_for(std::int64_t subwindow, std::int64_t cost) const;
  // Credit only while the quota is not contested: once the store said a sub-window still
  // counted with this one was spent, taking on credit would be taking beyond the limit.
  bool bridging(const Slot& s) const {
    return shared_ && o_.bridge && !s.answered && spent_in_ < counted_from(s.subwindow);
  }
  std::int64_t lease_size(std::int64_t need) const;
  bool store_count_fresh(WallTime now) const;  // the store's last count may be trusted now

  Options o_;
  std::int64_t sub_ns_ = 1;  // a sub-window's length
  bool shared_ = false;
  std::size_t replicas_ = 1;
  // k + 2 slots: the current sub-window, the k before it (counted locally) and the next one.
  std::vector<Slot> ring_;
  std::int64_t cur_ = -1;  // the latest sub-window seen
  bool in_flight_ = false;
  bool unreported_ = false;  // a slot may hold takes beyond its leases (see ask())
  std::int64_t last_lease_ = 0;
  std::int64_t spent_in_ = std::numeric_limits<std::int64_t>::min();  // the latest sub-window found spent
  std::int64_t store_counted_ = -1;                                   // the store's count at its last answer
  std::int64_t store_counted_in_ = -1;                                // the sub-window that answer came in
  WallTime store_counted_at_{};                                       // ... and when
  std::int64_t store_oldest_ = -1;  // the earliest sub-window it counted any in (-1: none)
  // Tokens taken per second, an exponentially weighted mean (for the lease size).
  double rate_ = 0;
  WallTime rate_at_{};
  std::int64_t rate_tokens_ = 0;
  double avg_cost_ = 0;  // of a request, an exponentially weighted mean
};

}  // namespace smartlb::routing
