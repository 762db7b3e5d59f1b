// The config file's `redis` section: scale-out through Redis (docs/scale-out.md).
#include <unistd.h>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/redis_url.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {

// The file's `redis:` section: the same settings as REDIS_URL and its variables, which it
// overrides (docs/scale-out.md). The URL's password never appears in a message.
void read_redis(Reader& r, const YAML::Node& n, Config& cfg) {
  if (!n || n.IsNull() || !r.is_map("redis", n)) return;
  r.check_keys("redis", n, kRedisKeys);
  RedisConfig& redis = cfg.redis;
  if (const auto v = n["url"])
    if (auto s = r.string("redis.url", v)) {
      auto parsed = parse_redis_url(*s);
      if (parsed.url)
        redis.url = std::move(parsed.url);
      else
        r.error("redis.url", v, parsed.error.substr(std::string_view("REDIS_URL ").size()));
    }
  if (const auto v = n["key_prefix"])
    if (auto s = r.string("redis.key_prefix", v)) redis.key_prefix = *s;
  if (const auto v = n["ca_file"])
    if (auto s = r.string("redis.ca_file", v)) {
      if (s->empty() || ::access(s->c_str(), R_OK) != 0)
        r.error("redis.ca_file", v, "cannot read the file " + smartlb::config::quoted(*s));
      else
        redis.ca_file = *s;
    }
  if (const auto v = n["timeout_ms"])
    if (auto x = r.integer("redis.timeout_ms", v, 10, 60'000, "an integer from 10 to 60000"))
      redis.timeout = std::chrono::milliseconds(*x);
  if (const auto v = n["replica_id"])
    if (auto s = r.string("redis.replica_id", v)) {
      if (s->empty() || s->size() > 200)
        r.error("redis.replica_id", v, "must be 1 to 200 characters");
      else
        redis.replica_id = *s;
    }
}

}  // namespace smartlb::config::file
