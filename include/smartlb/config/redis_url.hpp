#pragma once
// REDIS_URL split into what a connection needs: redis://[user[:password]@]host[:port][/db]
// or rediss:// (TLS). Pure; errors name REDIS_URL's part at fault and never hold the password.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::config {

struct RedisUrl {
  bool tls = false;      // rediss://
  std::string user;      // empty: the default user (AUTH password, Redis < 6 style)
  std::string password;  // secret: never logged; empty: no AUTH
  std::string host;      // without brackets for IPv6
  std::uint16_t port = 6379;
  int database = 0;  // SELECT, when not 0

  // The URL as it may be shown: the password replaced by "***".
  std::string redacted() const;
};

struct RedisUrlParseResult {
  std::optional<RedisUrl> url;
  std::string error;  // what is wrong, without the password
};
RedisUrlParseResult parse_redis_url(std::string_view text);

}  // namespace smartlb::config
