#include "smartlb/redis/shared_in_flight.hpp"

#include <string>

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

const RedisScript& SharedInFlight::script() {
  // A lease that is not a well-formed "slots:expiry" counts as gone, as one whose expiry passed.
  // The asker is granted at least what it holds in flight (those requests already run: a cap
  // lowered by a reload, or replicas back from their local shares, may leave the sum over the cap
  // until enough of them end).
  static const RedisScript s(R"lua(
local me, in_use, want, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local others = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if fields[i] ~= me then
    local slots, expires = string.match(fields[i + 1], '^(%d+):(%d+)$')
    if slots == nil or tonumber(expires) <= now then
      redis.call('HDEL', KEYS[1], fields[i])
    else
      others = others + tonumber(slots)
    end
  end
end
local grant = math.max(in_use, math.min(want, cap - others))
if grant > 0 then
  redis.call('HSET', KEYS[1], me, grant .. ':' .. (now + ttl))
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('HDEL', KEYS[1], me)
end
return {grant, others}
)lua");
  return s;
}

SharedInFlight::SharedInFlight(RedisService& redis, const base::Clock& clock, SharedInFlightOptions options)
    : redis_(redis), clock_(clock), prefix_(redis.key_prefix()), options_(std::move(options)) {
  redis_.on_connected([this] {
    set_shared(true);
    tick();  // what each budget holds, at once
  });
  redis_.on_disconnected([this] { set_shared(false); });
  ticker_.emplace(redis_, options_.tick, [this] { tick(); });
}

SharedInFlight::~SharedInFlight() = default;

void SharedInFlight::attach(clients::InFlightLease& s) {
  std::lock_guard lock(mutex_);
  shares_.push_back(&s);
  std::lock_guard share_lock(s.mutex);
  s.share.set_shared(redis_.up(), redis_.live_replicas());
}

void SharedInFlight::set_shared(bool shared) {
  const std::size_t replicas = redis_.live_replicas();
  std::lock_guard lock(mutex_);
  for (clients::InFlightLease* s : shares_) {
    std::lock_guard share_lock(s->mutex);
    s->share.set_shared(shared, replicas);
  }
}

void SharedInFlight::tick() {
  const base::MonoNanos now = clock_.now();
  std::vector<std::pair<clients::InFlightLease*, clients::InFlightShare::Ask>> asks;
  {
    std::lock_guard lock(mutex_);
    for (clients::InFlightLease* s : shares_) {
      std::lock_guard share_lock(s->mutex);
      if (auto a = s->share.tick(s->in_use, s->cap, now)) asks.emplace_back(s, *a);
    }
  }
  for (const auto& [s, ask] : asks) send(*s, ask);
}

void SharedInFlight::send(clients::InFlightLease& s, const clients::InFlightShare::Ask& ask) {
  redis_.eval(script(), {in_flight_key(prefix_, s.name)},
              {redis_.replica_id(), std::to_string(ask.in_use), std::to_string(ask.want),
               std::to_string(ask.cap), std::to_string(options_.lease_ttl.count())},
              [this, &s, ask](RedisResult r) {
                std::optional<std::int64_t> grant, others;
                if (r.ok() && r.value->elements.size() == 2) {
                  grant = r.value->elements[0].as_integer();
                  others = r.value->elements[1].as_integer();
                }
                const bool answered = grant && others;
                {
                  std::lock_guard lock(s.mutex);
                  if (answered)
                    s.share.granted(ask, *grant, *others, clock_.now());
                  else
                    s.share.ask_failed(ask);
                }
                if (!answered && options_.on_failure) options_.on_failure();
              });
}

}  // namespace smartlb::redis
