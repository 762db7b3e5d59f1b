#include "smartlb/clients/jwt/token_authenticator.hpp"

#include <atomic>

#include "smartlb/clients/jwt/jwt.hpp"

namespace smartlb::clients::jwt {

namespace {
std::atomic<std::uint64_t> next_id{1};
}

TokenAuthenticator::TokenAuthenticator(std::vector<TokenIssuer> issuers)
    : issuers_(std::move(issuers)), id_(next_id.fetch_add(1, std::memory_order_relaxed)) {}

TokenVerdict TokenAuthenticator::verify(std::string_view token, VerifiedTokenCache& cache,
                                        const base::Clock& clock) const {
  TokenVerdict v;
  const WallTime wall_now = clock.wall_now();
  cache.bind(id_);
  const std::uint64_t h = VerifiedTokenCache::hash(token);
  if ((v.token = cache.find(token, h, wall_now))) return v;
  if (const auto refused = cache.find_refusal(token, h, wall_now)) {
    v.refusal = *refused;
    return v;
  }
  // A final refusal is remembered; a missing key is not (a refetch may bring it).
  const auto refuse = [&](TokenRefusal why) {
    v.refusal = why;
    cache.insert_refusal(token, h, why, wall_now);
    return v;
  };

  const auto jwt = parse_jwt(token);
  if (!jwt) return refuse(TokenRefusal::Malformed);
  if (jwt->alg != "RS256") return refuse(TokenRefusal::UnsupportedAlgorithm);
  const TokenIssuer* issuer = nullptr;
  for (const auto& i : issuers_)
    if (issued_by(jwt->claims, i.rules)) {
      issuer = &i;
      break;
    }
  if (!issuer) return refuse(TokenRefusal::UnknownIssuer);
  if (jwt->kid.empty()) return refuse(TokenRefusal::Malformed);

  const auto keys = issuer->keys->current();
  const RsaPublicKey* key = keys ? keys->find(jwt->kid) : nullptr;
  if (!key) {
    v.refusal = keys ? TokenRefusal::UnknownKey : TokenRefusal::KeysUnavailable;
    if (issuer->keys->request_refetch(clock.coarse_now())) v.wait_for = issuer->keys;
    return v;
  }
  if (!key->verify_rs256(jwt->signing_input, jwt->signature)) return refuse(TokenRefusal::BadSignature);
  if (const auto why = check_claims(jwt->claims, issuer->rules, wall_now)) return refuse(*why);
  auto identity = derive_identity(jwt->claims, issuer->rules);
  if (!identity) return refuse(TokenRefusal::MissingClaim);
  v.token = std::make_shared<const VerifiedToken>(std::move(*identity));
  cache.insert(token, h, v.token);
  return v;
}

}  // namespace smartlb::clients::jwt
