#pragma once
// Verifies bearer JWTs against the configured issuers: cached verdicts first (the worker's
// VerifiedTokenCache), then the full check -- parse, RS256 only, the issuer by `iss`, the key
// by `kid`, the signature, the claims -- and the caller's identity. Immutable once built (part
// of a configuration snapshot); the mutable parts are the issuers' IssuerKeys and the cache.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/jwt/issuer_keys.hpp"
#include "smartlb/clients/jwt/token_refusal.hpp"
#include "smartlb/clients/jwt/token_rules.hpp"
#include "smartlb/clients/jwt/verified_token_cache.hpp"

namespace smartlb::clients::jwt {

struct TokenIssuer {
  IssuerRules rules;
  std::shared_ptr<IssuerKeys> keys;
};

struct TokenVerdict {
  std::shared_ptr<const VerifiedToken> token;  // accepted
  TokenRefusal refusal = TokenRefusal::Malformed;
  // KeysUnavailable / UnknownKey while the issuer's keys are being fetched: the result may
  // accept the token (wait for it, then verify again).
  std::shared_ptr<IssuerKeys> wait_for;
};

class TokenAuthenticator {
 public:
  explicit TokenAuthenticator(std::vector<TokenIssuer> issuers);
  bool empty() const { return issuers_.empty(); }
  const std::vector<TokenIssuer>& issuers() const { return issuers_; }

  // The clock's wall time is compared with exp/nbf; its monotonic time (read only on a miss)
  // rate-limits key refetches.
  TokenVerdict verify(std::string_view token, VerifiedTokenCache& cache, const base::Clock& clock) const;

 private:
  std::vector<TokenIssuer> issuers_;
  std::uint64_t id_;  // binds caches to this configuration
};

}  // namespace smartlb::clients::jwt
