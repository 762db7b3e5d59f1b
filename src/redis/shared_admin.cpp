#include "smartlb/redis/shared_admin.hpp"

#include <spdlog/spdlog.h>

#include "smartlb/redis/admin_message.hpp"
#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

const RedisScript& SharedAdmin::script() {
  static const RedisScript s(R"lua(
local prefix = ARGV[1] .. '/'
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if f == ARGV[1] or string.sub(f, 1, #prefix) == prefix then redis.call('HDEL', KEYS[1], f) end
end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return 1
)lua");
  return s;
}

SharedAdmin::SharedAdmin(RedisService& redis, routing::BackendStates& states)
    : redis_(redis),
      states_(states),
      prefix_(redis.key_prefix()),
      key_(admin_key(prefix_)),
      channel_(admin_channel(prefix_)) {
  redis_.subscribe(channel_, [this](std::string_view payload) { apply(payload); });
  redis_.on_connected([this] { resync(); });
  states_.set_admin_listener(this);
}

SharedAdmin::~SharedAdmin() { states_.set_admin_listener(nullptr); }

void SharedAdmin::on_admin_change(const routing::AdminChange& change) {
  // On the admin thread, after the change was applied here: what this replica now holds for the
  // backend is what Redis gets.
  store(change.backend, encode_change(change, redis_.replica_id()));
  if (change.kind == routing::AdminChange::Kind::Lift) lift_cooldowns(change);
}

void SharedAdmin::store(const std::string& backend, const std::string& message, std::function<void()> then) {
  std::vector<std::string> args{backend, channel_, message};
  if (const auto id = states_.current_backend(backend))
    for (const auto& scope : states_.admin_scopes(*id)) {
      args.push_back(admin_field(backend, scope.deployment));
      args.push_back(encode_settings(scope.settings));
    }
  stores_in_flight_.fetch_add(1, std::memory_order_relaxed);
  redis_.eval(script(), {key_}, std::move(args),
              [this, backend, message, then = std::move(then)](RedisResult r) {
                stores_in_flight_.fetch_sub(1, std::memory_order_relaxed);
                if (!r.value) {  // Redis is away: written and published when it is back
                  unstored_.emplace_back(backend, message);
                  if (unstored_.size() > kMaxUnstored) unstored_.pop_front();
                }
                if (then) then();
              });
}

void SharedAdmin::lift_cooldowns(const routing::AdminChange& c) {
  if (c.deployment) {
    redis_.command({"DEL", cooldown_key(prefix_, c.backend, *c.deployment, false)});
    return;
  }
  redis_.command({"DEL", cooldown_key(prefix_, c.backend, "", true)});
  delete_cooldowns("0", glob_escape(prefix_) + "{" + glob_escape(c.backend) + "/*}:cooldown");
}

void SharedAdmin::delete_cooldowns(std::string cursor, std::string pattern) {
  redis_.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, [this, pattern](RedisResult r) {
    if (!r.ok() || !r.value->is_array() || r.value->elements.size() != 2) return;
    for (const auto& k : r.value->elements[1].elements) redis_.command({"DEL", k.text});
    if (const std::string next = r.value->elements[0].text; next != "0") delete_cooldowns(next, pattern);
  });
}

void SharedAdmin::apply(std::string_view payload) {
  auto received = decode_change(payload);
  if (!received) {
    spdlog::debug("redis: ignored an admin message that cannot be read");
    return;
  }
  if (received->replica == redis_.replica_id()) return;  // our own, already applied
  heard_.fetch_add(1, std::memory_order_relaxed);
  if (states_.apply_remote_admin(received->change)) {
    applied_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin: backend {}{}{}: {} by {} on replica {}", received->change.backend,
                 received->change.deployment ? " deployment " : "", received->change.deployment.value_or(""),
                 to_string(received->change.kind), received->change.stamp.by, received->replica);
  }
}

void SharedAdmin::resync() {
  // Ours first (made while Redis was away, each published for the replicas that read the hash
  // before it), then the hash whole, once the last write answered: a script Redis does not have
  // yet is sent again (EVAL after EVALSHA's NOSCRIPT), after a read queued behind it.
  std::deque<std::pair<std::string, std::string>> pending;
  pending.swap(unstored_);
  if (pending.empty()) {
    read_all();
    return;
  }
  for (std::size_t i = 0; i < pending.size(); ++i)
    store(pending[i].first, pending[i].second,
          i + 1 == pending.size() ? std::function<void()>([this] { read_all(); }) : nullptr);
}

void SharedAdmin::read_all() {
  const std::uint64_t heard = heard_.load(std::memory_order_relaxed);
  redis_.command({"HGETALL", key_}, [this, heard](RedisResult r) {
    if (!r.ok() || !r.value->is_array()) return;
    // Behind this replica's own writes; and a message another replica published after Redis
    // answered this read, but received before its answer, is not undone by it (a drain stored
    // while this replica read the empty hash of a restarted Redis was lost).
    if (stores_in_flight_.load(std::memory_order_relaxed) > 0 ||
        heard_.load(std::memory_order_relaxed) != heard) {
      read_all();  // again
      return;
    }
    const auto& e = r.value->elements;
    std::vector<routing::AdminEntry> entries;
    for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
      auto settings = decode_settings(e[i + 1].text);
      if (!settings) continue;
      AdminScope scope = admin_scope_of(e[i].text);
      entries.push_back({std::move(scope.backend), std::move(scope.deployment), std::move(*settings)});
    }
    states_.replace_admin(entries);
    resyncs_.fetch_add(1, std::memory_order_relaxed);
  });
}

}  // namespace smartlb::redis
