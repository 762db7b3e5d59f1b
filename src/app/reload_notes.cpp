#include "smartlb/app/reload_notes.hpp"

namespace smartlb::app {
namespace {

// A Redis URL as it may be shown (no password), or "none".
std::string shown(const std::optional<config::RedisUrl>& url) {
  return url ? url->redacted() : std::string("none");
}

bool same_url(const std::optional<config::RedisUrl>& a, const std::optional<config::RedisUrl>& b) {
  if (!a || !b) return !a && !b;
  return a->tls == b->tls && a->user == b->user && a->password == b->password && a->host == b->host &&
         a->port == b->port && a->database == b->database;
}

}  // namespace

std::vector<std::string> settings_needing_restart(const config::Config& running,
                                                  const config::Config& loaded) {
  // The Redis connection and what is shared through it are set up once, before the first request.
  const config::RedisConfig &was = running.redis, &now = loaded.redis;
  std::vector<std::string> changed;
  if (!same_url(was.url, now.url))
    changed.push_back("redis.url (REDIS_URL): " + shown(was.url) + " -> " + shown(now.url) +
                      (shown(was.url) == shown(now.url) ? " (the password changed)" : ""));
  if (was.key_prefix != now.key_prefix)
    changed.push_back("redis.key_prefix (REDIS_KEY_PREFIX): \"" + was.key_prefix + "\" -> \"" +
                      now.key_prefix + "\"");
  if (was.ca_file != now.ca_file) changed.push_back("redis.ca_file (REDIS_CA_FILE)");
  if (was.timeout != now.timeout)
    changed.push_back("redis.timeout_ms (REDIS_TIMEOUT_MS): " + std::to_string(was.timeout.count()) + " -> " +
                      std::to_string(now.timeout.count()));
  if (was.replica_id != now.replica_id)
    changed.push_back("redis.replica_id (REPLICA_ID): " + was.replica_id + " -> " + now.replica_id);
  for (auto& line : changed) line += ": read at start only; restart smartlb to apply it";
  return changed;
}

}  // namespace smartlb::app
