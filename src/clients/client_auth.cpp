#include "smartlb/clients/client_auth.hpp"

#include "smartlb/base/text.hpp"
#include "smartlb/clients/jwt/jwt.hpp"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace smartlb::clients {

ClientAuthenticator::ClientAuthenticator(const std::vector<ClientKey>& keys,
                                         std::shared_ptr<const jwt::TokenAuthenticator> tokens)
    : tokens_(tokens && !tokens->empty() ? std::move(tokens) : nullptr) {
  for (const auto& k : keys) {
    Digest d{};
    if (k.key_sha256.empty()) {
      d = digest(k.key);
    } else {
      // Validated by the configuration: 64 hex digits. Anything else matches no key.
      bool ok = k.key_sha256.size() == 2 * d.size();
      for (std::size_t i = 0; ok && i < d.size(); ++i) {
        const int hi = base::hex_digit_value(k.key_sha256[2 * i]),
                  lo = base::hex_digit_value(k.key_sha256[2 * i + 1]);
        ok = hi >= 0 && lo >= 0;
        d[i] = static_cast<unsigned char>(hi * 16 + lo);
      }
      if (!ok) continue;
    }
    clients_.push_back({d, k.name, k.subjects});
  }
}

std::vector<ClientKey> ClientAuthenticator::from_key_list(const std::vector<std::string>& keys) {
  std::vector<ClientKey> out;
  for (std::size_t i = 0; i < keys.size(); ++i)
    out.push_back({"client-" + std::to_string(i + 1), keys[i], {}, {}});
  return out;
}

ClientAuthenticator::Digest ClientAuthenticator::digest(std::string_view key) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), d.data());
  return d;
}

const ClientAuthenticator::Client* ClientAuthenticator::match(std::string_view key) const {
  if (key.empty()) return nullptr;
  const Digest d = digest(key);
  const Client* found = nullptr;
  for (const auto& c : clients_) {  // no early exit: the time does not depend on which
    const bool same = CRYPTO_memcmp(c.digest.data(), d.data(), d.size()) == 0;
    found = same ? &c : found;
  }
  return found;
}

std::optional<ClientIdentity> ClientAuthenticator::identify(const PresentedCredentials& in) const {
  if (!enabled()) return anonymous();
  std::string_view field = "api-key";
  const Client* c = match(in.api_key);
  if (!c && (c = match(in.x_api_key))) field = "x-api-key";
  constexpr std::string_view bearer = "Bearer ";
  if (!c && in.authorization.size() > bearer.size() && in.authorization.substr(0, bearer.size()) == bearer &&
      (c = match(in.authorization.substr(bearer.size()))))
    field = "authorization";
  if (!c) return std::nullopt;
  return ClientIdentity{c->name, c->subjects, c->name, nullptr, field};
}

Authentication ClientAuthenticator::authenticate(const PresentedCredentials& in,
                                                 jwt::VerifiedTokenCache& cache,
                                                 const base::Clock& clock) const {
  Authentication a;
  if (!enabled()) {
    a.identity = anonymous();
    return a;
  }
  constexpr std::string_view bearer = "Bearer ";
  const bool has_bearer =
      in.authorization.size() > bearer.size() && in.authorization.substr(0, bearer.size()) == bearer;
  const std::string_view value = has_bearer ? in.authorization.substr(bearer.size()) : std::string_view();
  if (tokens_ && has_bearer && jwt::looks_like_jwt(value)) {
    if (std::optional<ClientIdentity> keyed = identify(PresentedCredentials{in.api_key, {}, in.x_api_key})) {
      a.identity = std::move(keyed);
      return a;
    }
    a.token = true;
    jwt::TokenVerdict v = tokens_->verify(value, cache, clock);
    if (v.token) {
      const jwt::VerifiedToken& t = *v.token;
      a.identity = ClientIdentity{t.name, t.subjects, t.principal, std::move(v.token), "authorization"};
    } else {
      a.refusal = v.refusal;
      a.wait_for = std::move(v.wait_for);
    }
    return a;
  }
  a.identity = identify(in);
  return a;
}

}  // namespace smartlb::clients
