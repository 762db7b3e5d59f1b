#pragma once
// Who the client is. With client keys configured (CLIENT_API_KEYS), a request must present
// one (api-key, or Authorization: Bearer) and is known by that key's name and subjects;
// without, anyone who reaches the port is the anonymous client. Keys are kept only as SHA-256
// digests and compared in constant time; a key never becomes a name.
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb {

struct ClientKey {
  std::string name;                   // shown in logs and metrics
  std::string key;                    // secret: kept only as its digest
  std::vector<std::string> subjects;  // e.g. "team:search", "user:alice"
  std::string key_sha256;             // instead of `key`: its SHA-256, 64 lower-case hex digits
};

struct ClientIdentity {
  std::string_view name;  // "anonymous" when authentication is off
  std::span<const std::string> subjects;
  std::string_view principal;  // the caller as one budget knows it: a key's client name
};

class ClientAuthenticator {
 public:
  ClientAuthenticator() = default;  // authentication off
  explicit ClientAuthenticator(const std::vector<ClientKey>& keys);
  // CLIENT_API_KEYS: the keys are named "client-1", "client-2", ... in their order.
  static std::vector<ClientKey> from_key_list(const std::vector<std::string>& keys);

  bool enabled() const { return !clients_.empty(); }
  // Everyone, when authentication is off.
  static ClientIdentity anonymous() { return {"anonymous", {}, "anonymous"}; }
  // `api_key` is the api-key header; `authorization` the Authorization header (Bearer).
  // nullopt: authentication is on and neither carries a known key.
  std::optional<ClientIdentity> identify(std::string_view api_key, std::string_view authorization) const;

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
};

}  // namespace smartlb
