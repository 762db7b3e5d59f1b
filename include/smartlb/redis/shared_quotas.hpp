#pragma once
// Declared quotas and client budgets shared by replicas through Redis (docs/scale-out.md,
// "Shared quotas"): the LeaseBroker of every SharedLease. An ask (LeasedQuota::ask) runs one
// script on the quota's hash of sub-window counts: it adds what the replica reports having
// taken beyond its leases to the asked sub-window, grants min(want, limit - counted) where
// `counted` sums the sub-windows of the last window up to and after the asked one, adds the
// grant, and the answer goes back to the lease under its owner's lock. Redis lost: every lease falls back to
// its local share (the limit divided by the live replicas last read); Redis back: shared again, and each
// lease reports what it took meanwhile with its next ask. A tick (every 100 ms, on the Redis thread) asks for
// the leases that had traffic lately, so the next sub-window's lease arrives before it begins.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/redis/redis_ticker.hpp"
#include "smartlb/routing/shared_lease.hpp"

namespace smartlb::redis {

struct SharedQuotasOptions {
  std::chrono::milliseconds tick{100};
  // Told on the Redis thread (metrics): an ask's answer (`granted` of `asked`), or none.
  std::function<void(std::int64_t asked, std::int64_t granted)> on_answer;
  std::function<void()> on_failure;
};

class SharedQuotas final : public routing::LeaseBroker {
 public:
  // Registers with `redis` (call before redis.start()); hand this to the owners of quotas
  // (BackendStates::set_lease_broker) before their first request.
  SharedQuotas(RedisService& redis, const base::Clock& clock, SharedQuotasOptions options = {});
  ~SharedQuotas() override;  // stops the tick; stop `redis` first
  SharedQuotas(const SharedQuotas&) = delete;
  SharedQuotas& operator=(const SharedQuotas&) = delete;

  void attach(routing::SharedLease& lease) override;
  void send(routing::SharedLease& lease, const routing::LeasedQuota::Ask& ask) override;

  // Asks answered by Redis, tokens (or requests) granted, asks that got no answer.
  std::uint64_t answered() const { return answered_.load(std::memory_order_relaxed); }
  std::uint64_t granted() const { return granted_.load(std::memory_order_relaxed); }
  std::uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  std::size_t size() const;

  // The script: KEYS[1] the quota's hash (redis::quota_key); ARGV: used (taken beyond leases,
  // to count), want, limit, the asked sub-window, the first sub-window counted with it, the
  // hash's time to live (ms), an ended sub-window and what the replica left unused of it (to
  // take off its count). Returns the grant.
  static const RedisScript& script();

 private:
  struct Entry {
    routing::SharedLease* lease;
    routing::LeasedQuota::WallTime recent_until{};  // asked for by the tick until then (Redis thread)
  };
  void set_shared(bool shared);  // Redis thread
  void tick();                   // Redis thread

  RedisService& redis_;
  const base::Clock& clock_;
  const std::string prefix_;
  mutable std::mutex mutex_;  // before any lease's lock
  std::vector<Entry> leases_;
  std::atomic<std::uint64_t> answered_{0}, granted_{0}, failed_{0};
  const SharedQuotasOptions options_;
  std::optional<RedisTicker> ticker_;  // last: stopped first
};

}  // namespace smartlb::redis
