#pragma once
// A budget's max_in_flight held by several replicas together (docs/client-budgets.md, "Requests
// in flight"): this replica may hold `lease` of the cap's slots, as granted by the store
// (redis::SharedInFlight), and the store grants so that the replicas' leases never sum past the
// cap. A request is admitted with no round trip while this replica holds fewer requests than its
// lease. Short of it, one ask for more goes out and the request waits for the answer (a round
// trip, only when demand grows); a tick gives back what is held beyond the requests in flight, so
// that a slot one replica no longer uses is another's within a tick, and renews the lease before
// the store forgets it (a replica that dies leaves nothing taken past the lease's time to live).
// Redis lost (or an ask failed): each replica keeps to its share, the cap divided by the live
// replicas (at least 1), until an answer comes (the tick asks again while it has none). Plain
// C++ with the time passed in; guarded by its owner's lock.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "smartlb/base/clock.hpp"

namespace smartlb::clients {

// A lease held this long without a change is asked for again (its time to live in the store is
// kInFlightLeaseTtl: a few renewals may fail before it is forgotten).
inline constexpr base::Nanos kInFlightRenewEvery = std::chrono::seconds(1);
inline constexpr base::Nanos kInFlightLeaseTtl = std::chrono::seconds(5);

class InFlightShare {
 public:
  struct Ask {
    std::int64_t in_use = 0;       // requests this replica holds as it asks (the store grants at least these)
    std::int64_t want = 0;         // the lease it asks for (0: it gives all back)
    std::int64_t cap = 0;          // the budget's max_in_flight as it asks
    std::uint64_t generation = 0;  // answers to asks of an earlier set_shared() are ignored
  };
  enum class Verdict : std::uint8_t {
    Admit,   // within the lease
    Wait,    // short of the lease, an ask is out: look again once it is answered
    Refuse,  // the cap is reached, as far as this replica can know now
  };

  // Redis up (leases) or lost (each replica its share of the cap).
  void set_shared(bool shared, std::size_t live_replicas);

  // One more request, `in_use` being held and `cap` the budget's max_in_flight (> 0); `waiting`:
  // it waits already (a Wait before), so it is not counted again. On Wait, `ask` may hold the
  // ask to send (after the owner's lock is released).
  Verdict take(std::int64_t in_use, std::int64_t cap, std::optional<Ask>& ask, bool waiting = false);
  // Every tick: the ask that gives back what is held beyond `in_use` (or renews the lease), if
  // any; asks refused since the last answer may go out again.
  std::optional<Ask> tick(std::int64_t in_use, std::int64_t cap, base::MonoNanos now);
  // The store's answer to `ask`: the lease granted, and what the other replicas hold.
  void granted(const Ask& ask, std::int64_t grant, std::int64_t others, base::MonoNanos now);
  void ask_failed(const Ask& ask);  // no answer: this replica keeps to its share until one comes

  // How many this replica may hold now, of `cap`.
  std::int64_t allowed(std::int64_t cap) const;
  std::int64_t lease() const { return lease_; }
  // The requests in flight on every replica, as far as this one knows (its own and the others'
  // leases as last answered), for a refusal's message.
  std::int64_t in_flight_everywhere(std::int64_t in_use, std::int64_t cap) const;
  bool asking() const { return asking_; }

 private:
  Ask send(std::int64_t in_use, std::int64_t want, std::int64_t cap);

  bool shared_ = false;
  std::size_t replicas_ = 1;
  std::int64_t lease_ = 0;   // granted by the store (shrunk at once when an ask gives back)
  std::int64_t others_ = 0;  // the other replicas' leases, as last answered
  std::int64_t short_ = 0;   // requests that began waiting since the last ask went out
  bool asking_ = false;      // an ask is out
  bool denied_ = false;      // the last answer granted less than asked: no ask until the next tick
  bool failed_ = false;      // the last ask got no answer: the local share until one comes
  base::MonoNanos renew_at_ = 0;
  std::uint64_t generation_ = 0;  // of the last set_shared()
};

// A ClientBudget's share as the store's broker sees it: named the same on every replica
// ("budget:<key>"), guarded by the budget's lock, which also guards `in_use` and `cap`.
struct InFlightLease {
  InFlightLease(std::string name, std::mutex& mutex, const std::int64_t& in_use, const std::int64_t& cap)
      : name(std::move(name)), mutex(mutex), in_use(in_use), cap(cap) {}
  const std::string name;
  std::mutex& mutex;
  const std::int64_t& in_use;  // the budget's requests in flight on this replica
  const std::int64_t& cap;     // its max_in_flight (0: none)
  InFlightShare share;
};

// Carries in-flight asks to the store (redis::SharedInFlight). Shares never move and live as
// long as their budgets (the process): the broker keeps pointers to them.
class InFlightBroker {
 public:
  virtual ~InFlightBroker() = default;
  // A new share: the broker sets its mode and ticks it from now on. No share's lock held.
  virtual void attach(InFlightLease& s) = 0;
  // Sends `ask`; the answer is handed to s.share under s.mutex later, on another thread.
  // Called without s.mutex held; returns at once.
  virtual void send(InFlightLease& s, const InFlightShare::Ask& ask) = 0;
};

}  // namespace smartlb::clients
