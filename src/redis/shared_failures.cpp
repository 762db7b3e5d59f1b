#include "smartlb/redis/shared_failures.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

const RedisScript& SharedFailures::script() {
  static const RedisScript s(R"lua(
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
redis.call('ZADD', KEYS[1], now, ARGV[2])
local n = redis.call('ZCARD', KEYS[1])
if n > tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], 61000)
end
return n
)lua");
  return s;
}

SharedFailures::SharedFailures(RedisService& redis, routing::BackendStates& states, const base::Clock& clock)
    : redis_(redis), states_(states), clock_(clock), prefix_(redis.key_prefix()) {}

void SharedFailures::count(Failure f) {
  if (!redis_.up()) return;  // the local count decides alone
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now().time_since_epoch()).count();
  // Unique across replicas and calls: two failures in the same millisecond are two.
  std::string member = redis_.replica_id();
  member += ':';
  member += std::to_string(sequence_.fetch_add(1, std::memory_order_relaxed));
  std::string key = failures_key(prefix_, f.backend, f.deployment);
  redis_.eval(
      script(), {std::move(key)}, {std::to_string(now_ms), std::move(member), std::to_string(f.allowed)},
      [this, f = std::move(f)](RedisResult r) {
        if (!r.ok()) return;
        const auto n = r.value->as_integer();
        if (!n || *n <= static_cast<std::int64_t>(f.allowed)) return;
        if (!states_.hold_by_name(f.backend, f.deployment, routing::FailureCause::FailureTolerance,
                                  f.cooldown))
          return;
        trips_.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn(
            "target {} failed more than {} time(s) in a minute, all replicas together: out for {} s "
            "(failure_tolerance)",
            f.target, f.allowed, std::chrono::duration_cast<std::chrono::seconds>(f.cooldown).count());
      });
}

}  // namespace smartlb::redis
