#pragma once
// Client budgets' max_in_flight held by the replicas together (docs/scale-out.md, "Requests in
// flight"): the InFlightBroker of every budget's InFlightShare. An ask runs one script on the
// budget's hash of leases (field = replica, value = slots and expiry): leases whose expiry passed
// are dropped (a replica that died), and the asker is granted min(want, cap - the others'
// leases), never less than what it holds in flight. A tick (every 100 ms, on the Redis thread)
// gives back slots held beyond what is in flight and renews the leases before they expire. Redis
// lost: each budget keeps to its local share (the cap divided by the live replicas) until it is back.
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/in_flight_share.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/redis/redis_ticker.hpp"

namespace smartlb::redis {

struct SharedInFlightOptions {
  std::chrono::milliseconds tick{100};
  // How long Redis keeps a replica's lease that is not renewed (it is renewed every second).
  std::chrono::milliseconds lease_ttl =
      std::chrono::duration_cast<std::chrono::milliseconds>(clients::kInFlightLeaseTtl);
  std::function<void()> on_failure;  // an ask got no answer (Redis thread; metrics)
};

class SharedInFlight final : public clients::InFlightBroker {
 public:
  // Registers with `redis` (call before redis.start()); hand this to the budgets
  // (BudgetRegistry::set_in_flight_broker) before their first request.
  SharedInFlight(RedisService& redis, const base::Clock& clock, SharedInFlightOptions options = {});
  ~SharedInFlight() override;  // stops the tick; stop `redis` first
  SharedInFlight(const SharedInFlight&) = delete;
  SharedInFlight& operator=(const SharedInFlight&) = delete;

  void attach(clients::InFlightLease& s) override;
  void send(clients::InFlightLease& s, const clients::InFlightShare::Ask& ask) override;

  // The script: KEYS[1] the budget's hash (redis::in_flight_key); ARGV: the replica's id, what it
  // holds in flight, the lease it wants, the cap, the lease's time to live (ms). Returns
  // {grant, the other replicas' leases}. Expiries are Redis's own clock (TIME): replicas' clocks
  // may differ.
  static const RedisScript& script();

 private:
  void set_shared(bool shared);  // Redis thread
  void tick();                   // Redis thread

  RedisService& redis_;
  const base::Clock& clock_;
  const std::string prefix_;
  const SharedInFlightOptions options_;
  mutable std::mutex mutex_;  // before any share's lock
  std::vector<clients::InFlightLease*> shares_;
  std::optional<RedisTicker> ticker_;  // last: stopped first
};

}  // namespace smartlb::redis
