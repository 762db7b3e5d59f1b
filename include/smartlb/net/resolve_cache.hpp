#pragma once
// How long a backend's resolved addresses are reused before its host name is looked up again.
// getaddrinfo reports no TTL, so a fixed one stands in (Envoy refreshes every 5 s by default;
// nginx resolves once at start-up and never again). Without it every new upstream connection
// waited for a DNS round trip, several in Kubernetes with `ndots:5`.
//
// Pure: the caller passes the time, so tests need no clock and no DNS.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "smartlb/base/clock.hpp"

namespace smartlb::net {

template <class Addresses>
class ResolveCache {
 public:
  static constexpr base::MonoNanos kDefaultTtl = 30'000'000'000;

  explicit ResolveCache(std::size_t backends, base::MonoNanos ttl = kDefaultTtl)
      : entries_(backends), ttl_(ttl) {}

  // The addresses resolved for `backend` less than the TTL before `now`, or null.
  const Addresses* find(std::size_t backend, base::MonoNanos now) const {
    const std::optional<Entry>& e = entries_[backend];
    return e && now - e->resolved_at < ttl_ ? &e->addresses : nullptr;
  }
  void store(std::size_t backend, Addresses addresses, base::MonoNanos now) {
    entries_[backend] = Entry{std::move(addresses), now};
  }
  // After a failed lookup: nothing stale is kept, and the next connect looks the name up again.
  void forget(std::size_t backend) { entries_[backend].reset(); }
  // Makes room for backends [0, n) (a new configuration may bring new ones).
  void ensure(std::size_t n) {
    if (entries_.size() < n) entries_.resize(n);
  }

 private:
  struct Entry {
    Addresses addresses;
    base::MonoNanos resolved_at;
  };
  std::vector<std::optional<Entry>> entries_;
  base::MonoNanos ttl_;
};

}  // namespace smartlb::net
