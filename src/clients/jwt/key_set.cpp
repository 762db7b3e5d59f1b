#include "smartlb/clients/jwt/key_set.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <nlohmann/json.hpp>

#include "smartlb/clients/jwt/base64url.hpp"

namespace smartlb::clients::jwt {

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BigNum = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ParamBuild = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using Params = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;

BigNum to_bignum(std::string_view b64) {
  const auto bytes = b64.empty() ? std::nullopt : base64url_decode(b64);
  if (!bytes || bytes->empty()) return nullptr;
  return BigNum(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes->data()), int(bytes->size()), nullptr));
}

}  // namespace

std::optional<RsaPublicKey> RsaPublicKey::from_jwk(std::string_view n, std::string_view e) {
  const BigNum bn_n = to_bignum(n), bn_e = to_bignum(e);
  if (!bn_n || !bn_e || BN_num_bits(bn_n.get()) < 2048) return std::nullopt;
  const ParamBuild build(OSSL_PARAM_BLD_new());
  if (!build || !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()))
    return std::nullopt;
  const Params params(OSSL_PARAM_BLD_to_param(build.get()));
  const PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0)
    return std::nullopt;
  return RsaPublicKey(std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free));
}

bool RsaPublicKey::verify_rs256(std::string_view signed_bytes, std::string_view signature) const {
  const MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(signed_bytes.data()),
                          signed_bytes.size()) == 1;
}

KeySetParse parse_jwks(std::string_view document) {
  KeySetParse out;
  const auto j = nlohmann::json::parse(document, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("keys") || !j["keys"].is_array()) {
    out.error = "the JWKS document is not a JSON object with a `keys` array";
    return out;
  }
  KeySet set;
  const auto str = [](const nlohmann::json& k, const char* name) -> std::string {
    const auto it = k.find(name);
    return it != k.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const auto& k : j["keys"]) {
    if (!k.is_object() || str(k, "kty") != "RSA") continue;
    const std::string use = str(k, "use"), kid = str(k, "kid");
    if ((!use.empty() && use != "sig") || kid.empty()) continue;
    if (auto key = RsaPublicKey::from_jwk(str(k, "n"), str(k, "e"))) set.by_kid.emplace(kid, std::move(*key));
  }
  if (set.by_kid.empty()) {
    out.error = "the JWKS document holds no usable RSA signing key";
    return out;
  }
  out.keys = std::move(set);
  return out;
}

DiscoveryParse parse_discovery(std::string_view document) {
  DiscoveryParse out;
  const auto j = nlohmann::json::parse(document, nullptr, /*allow_exceptions=*/false);
  const auto it = j.is_object() ? j.find("jwks_uri") : j.end();
  if (!j.is_object() || it == j.end() || !it->is_string()) {
    out.error = "the OpenID configuration has no jwks_uri";
    return out;
  }
  const std::string uri = it->get<std::string>();
  if (uri.rfind("https://", 0) != 0 && uri.rfind("http://", 0) != 0) {
    out.error = "the OpenID configuration's jwks_uri is not an http(s) URL";
    return out;
  }
  out.jwks_uri = uri;
  return out;
}

}  // namespace smartlb::clients::jwt
