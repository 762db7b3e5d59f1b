#include "smartlb/redis/shared_cooldowns.hpp"

#include <spdlog/spdlog.h>

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

const RedisScript& SharedCooldowns::script() {
  // An atomic max: the stored deadline only grows, the key expires with it, and a message goes
  // out only when this call grew it (so a replica repeating a known deadline costs no message).
  static const RedisScript s(R"lua(
local current = redis.call('GET', KEYS[1])
if current then
  local until_ms = tonumber(string.match(current, '^(%d+)'))
  if until_ms and until_ms >= tonumber(ARGV[1]) then return current end
end
local value = ARGV[1] .. ' ' .. ARGV[2]
redis.call('SET', KEYS[1], value)
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[3], value)
return value
)lua");
  return s;
}

SharedCooldowns::SharedCooldowns(RedisService& redis, routing::BackendStates& states)
    : redis_(redis), states_(states), prefix_(redis.key_prefix()), channel_(cooldown_channel(prefix_)) {
  redis_.subscribe(channel_, [this](std::string_view payload) { apply(payload, false); });
  redis_.on_connected([this] { resync(); });
  states_.set_cooldown_listener(this);
}

SharedCooldowns::~SharedCooldowns() { states_.set_cooldown_listener(nullptr); }

void SharedCooldowns::on_cooldown(const routing::CooldownNotice& notice) {
  // On a worker thread: build the message and hand it over; nothing here waits.
  CooldownMessage m;
  m.backend = notice.backend;
  m.deployment = notice.deployment;
  m.whole_backend = notice.whole_backend;
  m.until_ms = states_.to_epoch_ms(notice.until);
  m.cause = notice.cause;
  m.replica = redis_.replica_id();
  const std::string key = cooldown_key(prefix_, m.backend, m.deployment, m.whole_backend);
  const std::string value = encode(m);
  const std::string json = value.substr(value.find(' ') + 1);
  redis_.eval(script(), {key}, {std::to_string(m.until_ms), json, channel_},
              [this, key, m](RedisResult r) mutable {
                if (!r.value) {
                  // Redis is away: publish it when Redis is back, if still in the future.
                  auto [it, inserted] = unpublished_.try_emplace(key, m);
                  if (!inserted && it->second.until_ms < m.until_ms) it->second = m;
                  if (inserted && unpublished_.size() > kMaxUnpublished) unpublished_.erase(it);
                  return;
                }
                if (!r.ok()) return;
                if (r.value->text.rfind(std::to_string(m.until_ms) + " ", 0) == 0)
                  published_.fetch_add(1, std::memory_order_relaxed);
                else
                  apply(r.value->text, false);  // another replica's deadline was later
              });
}

void SharedCooldowns::publish(CooldownMessage m) {
  const std::string key = cooldown_key(prefix_, m.backend, m.deployment, m.whole_backend);
  const std::string value = encode(m);
  redis_.eval(script(), {key}, {std::to_string(m.until_ms), value.substr(value.find(' ') + 1), channel_},
              [this](RedisResult r) {
                if (r.ok()) published_.fetch_add(1, std::memory_order_relaxed);
              });
}

void SharedCooldowns::apply(std::string_view text, bool from_resync) {
  auto m = decode_cooldown(text);
  if (!m) {
    spdlog::debug("redis: ignored a cooldown message that cannot be read");
    return;
  }
  if (!from_resync && m->replica == redis_.replica_id()) return;  // our own, already applied
  if (states_.apply_remote_cooldown(m->backend, m->deployment, m->whole_backend, m->until_ms, m->cause)) {
    applied_.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("redis: cooldown of {}{}{} from replica {} applied", m->backend,
                  m->whole_backend ? "" : "/", m->deployment, m->replica);
  }
}

void SharedCooldowns::resync() {
  // What this replica saw while Redis was away goes out first, then everything still in
  // the future is read back.
  std::map<std::string, CooldownMessage> pending;
  pending.swap(unpublished_);
  const std::int64_t now_ms = states_.to_epoch_ms(states_.clock().now());
  for (auto& [key, m] : pending)
    if (m.until_ms > now_ms) publish(std::move(m));
  scan("0");
}

void SharedCooldowns::scan(std::string cursor) {
  redis_.command({"SCAN", cursor, "MATCH", glob_escape(prefix_) + "{*}:cooldown", "COUNT", "1000"},
                 [this](RedisResult r) {
                   if (!r.ok() || !r.value->is_array() || r.value->elements.size() != 2) return;
                   const auto& keys = r.value->elements[1].elements;
                   for (const auto& k : keys)
                     redis_.command({"GET", k.text}, [this](RedisResult v) {
                       if (v.ok() && v.value->kind == RedisValue::Kind::String) apply(v.value->text, true);
                     });
                   const std::string next = r.value->elements[0].text;
                   if (next != "0") scan(next);
                 });
}

}  // namespace smartlb::redis
