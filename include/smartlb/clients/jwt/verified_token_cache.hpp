#pragma once
// The tokens one worker has verified, so that a caller's next request costs a hash and a
// compare instead of an RSA verification. Single-threaded (one per worker: no lock). Keyed by a
// fast non-cryptographic hash of the token; a hit also compares the whole token, so a collision
// is only a miss. Bounded: when full, the oldest entry goes; an expired entry goes when found.
// Refusals are remembered briefly too (bounded), so a flood of one bad token costs one RSA check.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/clients/jwt/token_refusal.hpp"
#include "smartlb/clients/jwt/token_rules.hpp"

namespace smartlb::clients::jwt {

struct TokenCacheLimits {
  std::size_t max_verified = 10'000;
  std::size_t max_refused = 1'000;
  std::chrono::seconds refusal_ttl{30};
};

class VerifiedTokenCache {
 public:
  explicit VerifiedTokenCache(TokenCacheLimits limits = {}) : limits_(limits) {}
  VerifiedTokenCache(const VerifiedTokenCache&) = delete;
  VerifiedTokenCache& operator=(const VerifiedTokenCache&) = delete;

  static std::uint64_t hash(std::string_view token);

  // Entries belong to one TokenAuthenticator (one configuration): a new owner empties the cache.
  void bind(std::uint64_t owner);

  // The token's identity while `now` is before its valid_until.
  std::shared_ptr<const VerifiedToken> find(std::string_view token, std::uint64_t hash, WallTime now);
  void insert(std::string_view token, std::uint64_t hash, std::shared_ptr<const VerifiedToken> verified);

  std::optional<TokenRefusal> find_refusal(std::string_view token, std::uint64_t hash, WallTime now);
  void insert_refusal(std::string_view token, std::uint64_t hash, TokenRefusal why, WallTime now);

  std::size_t size() const { return verified_.entries.size(); }
  std::size_t refused_size() const { return refused_.entries.size(); }

 private:
  template <class V>
  struct Entry {
    std::string token;
    V value;
    WallTime until;
    std::uint64_t seq;
  };
  template <class V>
  struct Table {
    std::unordered_map<std::uint64_t, Entry<V>> entries;
    std::deque<std::pair<std::uint64_t, std::uint64_t>> order;  // (hash, seq), oldest first
    std::uint64_t next_seq = 0;
    const V* find(std::string_view token, std::uint64_t hash, WallTime now);
    void insert(std::string_view token, std::uint64_t hash, V value, WallTime until, std::size_t max);
    void clear() {
      entries.clear();
      order.clear();
    }
  };

  TokenCacheLimits limits_;
  std::uint64_t owner_ = 0;
  Table<std::shared_ptr<const VerifiedToken>> verified_;
  Table<TokenRefusal> refused_;
};

}  // namespace smartlb::clients::jwt
