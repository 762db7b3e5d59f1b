#include "smartlb/redis/shared_probes.hpp"

#include <nlohmann/json.hpp>

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

namespace {

std::int64_t millis(base::Nanos d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

template <class T>
bool read_member(const nlohmann::json& j, const char* name, T& out) {
  const auto it = j.find(name);
  if (it == j.end()) return true;  // optional
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return false;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return false;
  } else {
    if (!it->is_number_integer() || it->template get<std::int64_t>() < 0) return false;
  }
  out = it->template get<T>();
  return true;
}

}  // namespace

std::string encode(const routing::SharedProbeResult& r) {
  nlohmann::json j{{"up", r.up}, {"s", r.status}, {"t", r.unix_ms}, {"r", r.replica}};
  if (!r.detail.empty()) j["d"] = r.detail;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<routing::SharedProbeResult> decode_probe_result(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("up") || !j.contains("t")) return std::nullopt;
  // Written by other replicas (or anyone with access to Redis): every member's type is checked.
  routing::SharedProbeResult r;
  if (!read_member(j, "up", r.up) || !read_member(j, "s", r.status) || !read_member(j, "t", r.unix_ms) ||
      !read_member(j, "r", r.replica) || !read_member(j, "d", r.detail))
    return std::nullopt;
  return r;
}

const RedisScript& SharedProbes::script() {
  static const RedisScript s(R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then left = 0 end
return {0, left, redis.call('GET', KEYS[2]) or ''}
)lua");
  return s;
}

SharedProbes::SharedProbes(RedisService& redis) : redis_(redis), prefix_(redis.key_prefix()) {}

void SharedProbes::take_turn(const std::string& backend, base::Nanos interval,
                             std::function<void(Turn)> done) {
  if (!redis_.up()) {
    done(Turn{});  // probing stays local
    return;
  }
  redis_.eval(script(), {probe_turn_key(prefix_, backend), probe_result_key(prefix_, backend)},
              {redis_.replica_id(), std::to_string(std::max<std::int64_t>(millis(interval), 1))},
              [this, done = std::move(done)](RedisResult r) {
                Turn turn;  // mine, unless Redis says another replica has it
                if (r.ok() && r.value->is_array() && r.value->elements.size() == 3 &&
                    r.value->elements[0].as_integer() == 0) {
                  turn.mine = false;
                  turn.turn_left = std::chrono::milliseconds(r.value->elements[1].as_integer().value_or(0));
                  turn.last = decode_probe_result(r.value->elements[2].text);
                }
                (turn.mine ? taken_ : lost_).fetch_add(1, std::memory_order_relaxed);
                done(std::move(turn));
              });
}

void SharedProbes::publish(const std::string& backend, const routing::SharedProbeResult& result,
                           base::Nanos ttl) {
  if (!redis_.up()) return;
  routing::SharedProbeResult signed_result = result;
  signed_result.replica = redis_.replica_id();
  redis_.command({"SET", probe_result_key(prefix_, backend), encode(signed_result), "PX",
                  std::to_string(std::max<std::int64_t>(millis(ttl), 1))});
}

}  // namespace smartlb::redis
