#pragma once
// Test keys and tokens: an RSA key pair made with OpenSSL, its JWK/JWKS, and JWTs signed with
// it (RS256), or with any header and signature a test wants to try. Header-only, OpenSSL only.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "smartlb/clients/jwt/base64url.hpp"

namespace smartlb::testing {

class TestRsaKey {
 public:
  explicit TestRsaKey(std::string kid, unsigned bits = 2048)
      : kid_(std::move(kid)), key_(EVP_RSA_gen(bits), EVP_PKEY_free) {
    if (!key_) throw std::runtime_error("EVP_RSA_gen failed");
  }
  const std::string& kid() const { return kid_; }

  nlohmann::json jwk() const {
    return {{"kty", "RSA"},
            {"use", "sig"},
            {"kid", kid_},
            {"n", param(OSSL_PKEY_PARAM_RSA_N)},
            {"e", param(OSSL_PKEY_PARAM_RSA_E)}};
  }

  // RS256 over `input`.
  std::string sign(const std::string& input) const {
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    std::size_t len = 0;
    if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) != 1)
      throw std::runtime_error("EVP_DigestSign failed");
    std::string sig(len, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
      throw std::runtime_error("EVP_DigestSign failed");
    sig.resize(len);
    return sig;
  }

 private:
  std::string param(const char* name) const {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key_.get(), name, &bn) != 1) throw std::runtime_error("no RSA parameter");
    std::string bytes(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
    BN_free(bn);
    return clients::jwt::base64url_encode(bytes);
  }
  std::string kid_;
  std::shared_ptr<EVP_PKEY> key_;
};

inline std::string jwks_of(const std::vector<const TestRsaKey*>& keys) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto* k : keys) list.push_back(k->jwk());
  return nlohmann::json{{"keys", list}}.dump();
}

inline std::string b64(const std::string& s) { return clients::jwt::base64url_encode(s); }

// "<header>.<claims>." with no signature yet.
inline std::string unsigned_jwt(const nlohmann::json& header, const nlohmann::json& claims) {
  return b64(header.dump()) + "." + b64(claims.dump());
}

// A token signed by `key` (header alg RS256, kid = the key's unless `kid` is given).
inline std::string sign_jwt(const TestRsaKey& key, const nlohmann::json& claims,
                            const std::string& kid = "") {
  const std::string input =
      unsigned_jwt({{"alg", "RS256"}, {"typ", "JWT"}, {"kid", kid.empty() ? key.kid() : kid}}, claims);
  return input + "." + b64(key.sign(input));
}

}  // namespace smartlb::testing
