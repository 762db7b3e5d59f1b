#pragma once
// failure_tolerance counted by all replicas together (docs/scale-out.md): each failure the
// local breaker did not trip on goes to a sorted set per (backend, deployment) in Redis, by a
// script that forgets failures older than a minute and answers how many are left. More than the
// target allows: the replica that counted the one too many trips the breaker (a hold, which
// every replica learns as a shared cooldown) and the count starts anew, as the local one does.
// Off the request path (the answer comes on the Redis thread); without Redis the local counts
// stand alone.
#include <atomic>
#include <cstdint>

#include "smartlb/base/clock.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/failure_breakers.hpp"

namespace smartlb::redis {

class SharedFailures final : public routing::FailureSharer {
 public:
  SharedFailures(RedisService& redis, routing::BackendStates& states, const base::Clock& clock);
  SharedFailures(const SharedFailures&) = delete;
  SharedFailures& operator=(const SharedFailures&) = delete;

  void count(Failure f) override;

  // Breakers this replica tripped on the shared count.
  std::uint64_t trips() const { return trips_.load(std::memory_order_relaxed); }

  // The script: KEYS[1] the failures key; ARGV: now (Unix ms), a unique member, the allowance.
  // Returns the failures of the last minute, this one included; past the allowance the set is
  // emptied (the breaker trips, counting starts anew).
  static const RedisScript& script();

 private:
  RedisService& redis_;
  routing::BackendStates& states_;
  const base::Clock& clock_;
  const std::string prefix_;
  std::atomic<std::uint64_t> sequence_{0}, trips_{0};
};

}  // namespace smartlb::redis
