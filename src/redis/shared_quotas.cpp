#include "smartlb/redis/shared_quotas.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

const RedisScript& SharedQuotas::script() {
  // The hash counts, per sub-window, every token granted to any replica, plus what replicas
  // took beyond their leases (while Redis was away, or before their first answer). A grant
  // leaves the sum from the first counted sub-window on -- the k before the asked one, the
  // asked one and any counted ahead (a next sub-window's early lease) -- within the limit, so
  // the k + 1 sub-windows around any interval of a window's length never hold more. Fields a
  // whole window older than any that still counts are dropped; what a replica left unused of an
  // ended sub-window's leases comes off that sub-window (nothing can be taken from it any more); the hash
  // expires when no replica asked for a window and two sub-windows. The answer: the grant, what
  // every replica holds or took of the window once granted, and the oldest sub-window counted
  // with any of it (-1: none), whose end gives room back.
  static const RedisScript s(R"lua(
local window, from = tonumber(ARGV[4]), tonumber(ARGV[5])
local used = tonumber(ARGV[1])
if used > 0 then redis.call('HINCRBY', KEYS[1], ARGV[4], used) end
local back = tonumber(ARGV[8])
if back > 0 then
  back = math.min(back, tonumber(redis.call('HGET', KEYS[1], ARGV[7]) or '0'))
  if back > 0 then redis.call('HINCRBY', KEYS[1], ARGV[7], -back) end
end
local counted, oldest = 0, -1
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local w = tonumber(fields[i])
  if w >= from then
    local n = tonumber(fields[i + 1])
    counted = counted + n
    if n > 0 and (oldest < 0 or w < oldest) then oldest = w end
  elseif w < from - (window - from) - 1 then
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
local grant = math.min(tonumber(ARGV[2]), tonumber(ARGV[3]) - counted)
if grant > 0 then
  redis.call('HINCRBY', KEYS[1], ARGV[4], grant)
  if oldest < 0 or window < oldest then oldest = window end
else
  grant = 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {grant, counted + grant, oldest}
)lua");
  return s;
}

SharedQuotas::SharedQuotas(RedisService& redis, const base::Clock& clock, SharedQuotasOptions options)
    : redis_(redis), clock_(clock), prefix_(redis.key_prefix()), options_(options) {
  redis_.on_connected([this] {
    set_shared(true);
    tick();  // the leases' first asks (and reports of what was taken meanwhile) at once
  });
  redis_.on_disconnected([this] { set_shared(false); });
  ticker_.emplace(redis_, options.tick, [this] { tick(); });
}

SharedQuotas::~SharedQuotas() = default;

std::size_t SharedQuotas::size() const {
  std::lock_guard lock(mutex_);
  return leases_.size();
}

void SharedQuotas::attach(routing::SharedLease& lease) {
  std::lock_guard lock(mutex_);
  leases_.push_back({&lease});
  std::lock_guard lease_lock(lease.mutex);
  lease.quota.set_shared(redis_.up(), redis_.live_replicas());
}

void SharedQuotas::set_shared(bool shared) {
  const std::size_t replicas = redis_.live_replicas();
  std::lock_guard lock(mutex_);
  for (const Entry& e : leases_) {
    std::lock_guard lease_lock(e.lease->mutex);
    e.lease->quota.set_shared(shared, replicas);
  }
  spdlog::info("redis: {} shared quota(s) {}", leases_.size(),
               shared ? "leased from Redis again"
                      : "on their local share (quota / " + std::to_string(replicas) +
                            " replicas) until Redis is back");
}

void SharedQuotas::tick() {
  const auto now = clock_.wall_now();
  std::vector<routing::PendingAsk> asks;
  {
    std::lock_guard lock(mutex_);
    for (Entry& e : leases_) {
      // Lately used: a window on, so that the next sub-window's lease is asked before it begins.
      if (e.lease->active.exchange(false, std::memory_order_relaxed))
        e.recent_until = now + e.lease->window + std::chrono::seconds(1);
      if (now >= e.recent_until) continue;
      std::lock_guard lease_lock(e.lease->mutex);
      if (auto a = e.lease->quota.ask(now)) asks.push_back({e.lease, *a});
    }
  }
  for (const routing::PendingAsk& p : asks) send(*p.lease, p.ask);
}

void SharedQuotas::send(routing::SharedLease& lease, const routing::LeasedQuota::Ask& ask) {
  const auto window_ms = std::chrono::duration_cast<std::chrono::milliseconds>(lease.window).count();
  const std::int64_t ttl_ms = std::max<std::int64_t>(window_ms + 2 * window_ms / lease.subwindows, 1000);
  // The first sub-window counted with the asked one: k before it (sliding), or itself (fixed).
  const std::int64_t from = lease.subwindows > 1 ? ask.subwindow - lease.subwindows : ask.subwindow;
  redis_.eval(script(), {quota_key(prefix_, lease.name)},
              {std::to_string(ask.used), std::to_string(ask.tokens),
               std::to_string(lease.limit.load(std::memory_order_relaxed)), std::to_string(ask.subwindow),
               std::to_string(from), std::to_string(ttl_ms), std::to_string(ask.returned_subwindow),
               std::to_string(ask.returned)},
              [this, &lease, ask](RedisResult r) {
                // {grant, what the window holds once granted, its oldest sub-window counted}
                std::optional<std::int64_t> grant, counted, oldest;
                if (r.ok() && r.value->elements.size() == 3) {
                  grant = r.value->elements[0].as_integer();
                  counted = r.value->elements[1].as_integer();
                  oldest = r.value->elements[2].as_integer();
                }
                {
                  std::lock_guard lock(lease.mutex);
                  if (grant)
                    lease.quota.granted(ask, *grant, clock_.wall_now(), counted.value_or(-1),
                                        oldest.value_or(-1));
                  else
                    lease.quota.ask_failed();
                }
                if (grant) {
                  answered_.fetch_add(1, std::memory_order_relaxed);
                  granted_.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(*grant, 0)),
                                     std::memory_order_relaxed);
                  // A return of leftovers alone asks for nothing: not an answer about the quota.
                  if (options_.on_answer && ask.tokens > 0) options_.on_answer(ask.tokens, *grant);
                } else {
                  failed_.fetch_add(1, std::memory_order_relaxed);
                  if (options_.on_failure) options_.on_failure();
                }
              });
}

}  // namespace smartlb::redis
