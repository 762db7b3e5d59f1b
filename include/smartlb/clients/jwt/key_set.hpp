#pragma once
// An issuer's published signing keys (a JWKS, RFC 7517) as OpenSSL public keys by `kid`, and
// RS256 verification with them. The OpenID discovery document that names the JWKS is read here
// too. No I/O: the key-set service fetches the documents.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace smartlb::clients::jwt {

class RsaPublicKey {
 public:
  // From a JWK's `n` and `e` (base64url, big-endian); nullopt when they do not decode or the
  // modulus is shorter than 2048 bits.
  static std::optional<RsaPublicKey> from_jwk(std::string_view n, std::string_view e);

  // RS256: RSASSA-PKCS1-v1_5 with SHA-256 over `signed_bytes`.
  bool verify_rs256(std::string_view signed_bytes, std::string_view signature) const;

 private:
  explicit RsaPublicKey(std::shared_ptr<evp_pkey_st> key) : key_(std::move(key)) {}
  std::shared_ptr<evp_pkey_st> key_;
};

struct KeySet {
  std::map<std::string, RsaPublicKey, std::less<>> by_kid;
  const RsaPublicKey* find(std::string_view kid) const {
    const auto it = by_kid.find(kid);
    return it == by_kid.end() ? nullptr : &it->second;
  }
};

struct KeySetParse {
  std::optional<KeySet> keys;
  std::string error;  // when no key set
};

// The RSA signing keys of a JWKS document (`keys`: kty RSA with kid, n, e; use absent or "sig").
// Other keys are skipped; a document without any usable key is an error.
KeySetParse parse_jwks(std::string_view document);

struct DiscoveryParse {
  std::string jwks_uri;  // empty on error
  std::string error;
};
// The `jwks_uri` of an OpenID configuration document (must be http:// or https://).
DiscoveryParse parse_discovery(std::string_view document);

}  // namespace smartlb::clients::jwt
