#pragma once
// RedisService options for tests against a local redis-server: quick heartbeats, timeouts and
// reconnections, so that losing and regaining Redis takes milliseconds, not seconds.
#include <chrono>
#include <string>

#include "smartlb/config/redis_url.hpp"
#include "smartlb/redis/redis_service.hpp"

namespace smartlb::testing {

inline redis::RedisServiceOptions test_redis_options(const std::string& url, const std::string& replica_id) {
  using namespace std::chrono_literals;
  redis::RedisServiceOptions o;
  o.config.url = config::parse_redis_url(url).url;
  o.config.replica_id = replica_id;
  o.config.timeout = 300ms;
  o.heartbeat = 50ms;
  o.connect_timeout = 1000ms;
  o.backoff_initial = 20ms;
  o.backoff_cap = 200ms;
  return o;
}

}  // namespace smartlb::testing
