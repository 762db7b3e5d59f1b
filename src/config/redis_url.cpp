#include "smartlb/config/redis_url.hpp"

#include <charconv>

#include "smartlb/base/text.hpp"

namespace smartlb::config {
namespace {

// RFC 3986 percent-decoding of a user or password ("p%40ss" -> "p@ss").
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = base::hex_digit_value(s[i + 1]), lo = base::hex_digit_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

template <class Int>
std::optional<Int> digits(std::string_view s) {
  Int n{};
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return n;
}

RedisUrlParseResult fail(std::string what) { return {std::nullopt, "REDIS_URL " + std::move(what)}; }

}  // namespace

std::string RedisUrl::redacted() const {
  std::string out = tls ? "rediss://" : "redis://";
  if (!user.empty() || !password.empty()) {
    out += user;
    if (!password.empty()) out += ":***";
    out += '@';
  }
  out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  out += ':' + std::to_string(port);
  if (database != 0) out += '/' + std::to_string(database);
  return out;
}

RedisUrlParseResult parse_redis_url(std::string_view text) {
  RedisUrl url;
  if (text.rfind("redis://", 0) == 0) {
    text.remove_prefix(8);
  } else if (text.rfind("rediss://", 0) == 0) {
    url.tls = true;
    text.remove_prefix(9);
  } else {
    return fail("must start with redis:// or rediss://");
  }
  // The authority ends at the first '/', '?' or '#'; the user info at its last '@' (a password
  // may hold an unencoded '@', as redis-cli accepts).
  const std::size_t end = text.find_first_of("/?#");
  std::string_view authority = text.substr(0, end);
  std::string_view rest = end == std::string_view::npos ? std::string_view() : text.substr(end);
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view info = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    const std::size_t colon = info.find(':');
    const auto user = percent_decode(info.substr(0, colon));
    if (!user) return fail("has a user name with a malformed %-escape");
    url.user = *user;
    if (colon != std::string_view::npos) {
      const auto password = percent_decode(info.substr(colon + 1));
      if (!password) return fail("has a password with a malformed %-escape (password not shown)");
      url.password = *password;
    }
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("has an IPv6 address without its closing ']'");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail("has characters after the IPv6 address's ']'");
      port = after.substr(1);
      if (port.empty()) return fail("has ':' without a port");
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return fail("has ':' without a port");
    }
  }
  if (url.host.empty()) return fail("has no host");
  for (char c : url.host)
    if (static_cast<unsigned char>(c) <= ' ' || c == '@' || c == '[' || c == ']')
      return fail("has a host with a character that cannot be in one");
  if (!port.empty()) {
    const auto p = digits<unsigned>(port);
    if (!p || *p == 0 || *p > 65535) return fail("has a port that is not a number from 1 to 65535");
    url.port = static_cast<std::uint16_t>(*p);
  }
  if (!rest.empty() && rest.front() == '/') {
    std::string_view db = rest.substr(1, rest.find_first_of("?#") - 1);
    rest.remove_prefix(1 + db.size());
    if (!db.empty()) {
      const auto n = digits<int>(db);
      if (!n || *n < 0 || *n > 65535)
        return fail("has a database that is not a number (\"/0\", \"/1\", ...)");
      url.database = *n;
    }
  }
  if (!rest.empty())
    return fail("has a query or fragment, which smartlb does not read (use the REDIS_* variables)");
  return {std::move(url), {}};
}

}  // namespace smartlb::config
