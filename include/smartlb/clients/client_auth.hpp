#pragma once
// Who the client is. With client keys configured (CLIENT_API_KEYS), a request must present
// one (api-key, or Authorization: Bearer) and is known by that key's name and subjects;
// without, anyone who reaches the port is the anonymous client. Keys are kept only as SHA-256
// digests and compared in constant time; a key never becomes a name.
// With token issuers configured (Entra ID tenants), a Bearer value that looks like a JWT is
// verified as one (clients/jwt/token_authenticator.hpp) instead of compared with the keys.
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/jwt/token_authenticator.hpp"

namespace smartlb::clients {

struct ClientKey {
  std::string name;                   // shown in logs and metrics
  std::string key;                    // secret: kept only as its digest
  std::vector<std::string> subjects;  // e.g. "team:search", "user:alice"
  std::string key_sha256;             // instead of `key`: its SHA-256, 64 lower-case hex digits
};

// Views valid for the request: for a key, into the ClientAuthenticator (the request's snapshot
// lease keeps it); for a token, into the VerifiedToken that `hold` keeps alive (the worker's
// cache may drop it meanwhile). Copy the identity, or keep the original, while using the views.
struct ClientIdentity {
  std::string_view name;  // bounded: "anonymous", a key's name, or a token issuer's name
  std::span<const std::string> subjects;
  std::string_view
      principal;  // the one caller: a key's client name; "user:<oid>" / "app:<appid>" for a token
  std::shared_ptr<const void> hold = nullptr;  // a token's VerifiedToken; null for keys and anonymous
  // The request header whose credential identified the client ("api-key", "authorization",
  // "x-api-key"; empty for the anonymous client). That credential is smartlb's: it never passes
  // through to a backend.
  std::string_view credential_field{};
};

// A client's credentials as it presented them (views into the request head).
struct PresentedCredentials {
  std::string_view api_key;        // api-key (or a browser WebSocket's key: subprotocol, query)
  std::string_view authorization;  // Authorization
  std::string_view x_api_key;      // x-api-key (Anthropic's SDKs)
};

// The result of authenticate(): an identity, or why not.
struct Authentication {
  std::optional<ClientIdentity> identity;
  bool token = false;  // a JWT was presented: `refusal` says why it was refused
  jwt::TokenRefusal refusal = jwt::TokenRefusal::Malformed;
  // Refused because the issuer's keys are being fetched: wait for the fetch (key_wait.hpp), then
  // authenticate again.
  std::shared_ptr<jwt::IssuerKeys> wait_for;
};

class ClientAuthenticator {
 public:
  ClientAuthenticator() = default;  // authentication off
  explicit ClientAuthenticator(const std::vector<ClientKey>& keys,
                               std::shared_ptr<const jwt::TokenAuthenticator> tokens = nullptr);
  // CLIENT_API_KEYS: the keys are named "client-1", "client-2", ... in their order.
  static std::vector<ClientKey> from_key_list(const std::vector<std::string>& keys);

  bool enabled() const { return !clients_.empty() || tokens_; }
  bool accepts_tokens() const { return tokens_ != nullptr; }
  const jwt::TokenAuthenticator* tokens() const { return tokens_.get(); }
  // Everyone, when authentication is off.
  static ClientIdentity anonymous() { return {"anonymous", {}, "anonymous"}; }
  // A key in api-key, x-api-key or Authorization (Bearer), in that order. nullopt:
  // authentication is on and none carries a known key.
  std::optional<ClientIdentity> identify(const PresentedCredentials& c) const;
  std::optional<ClientIdentity> identify(std::string_view api_key, std::string_view authorization) const {
    return identify(PresentedCredentials{api_key, authorization, {}});
  }
  // Keys and tokens: api-key and x-api-key carry keys; a Bearer value that looks like a JWT is
  // verified as a token (when issuers are configured), any other is a key.
  Authentication authenticate(const PresentedCredentials& c, jwt::VerifiedTokenCache& cache,
                              const base::Clock& clock) const;
  Authentication authenticate(std::string_view api_key, std::string_view authorization,
                              jwt::VerifiedTokenCache& cache, const base::Clock& clock) const {
    return authenticate(PresentedCredentials{api_key, authorization, {}}, cache, clock);
  }

 private:
  using Digest = std::array<unsigned char, 32>;
  struct Client {
    Digest digest;
    std::string name;
    std::vector<std::string> subjects;
  };
  static Digest digest(std::string_view key);
  const Client* match(std::string_view key) const;
  std::vector<Client> clients_;
  std::shared_ptr<const jwt::TokenAuthenticator> tokens_;  // null: no token issuers
};

}  // namespace smartlb::clients
