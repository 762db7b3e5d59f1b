#pragma once
// Optional client authentication (CLIENT_API_KEYS): without it, anyone who reaches the port
// spends the backends' quota. Keys are kept only as SHA-256 digests and compared in
// constant time.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb {

class ClientAuthenticator {
 public:
  explicit ClientAuthenticator(const std::vector<std::string>& keys);
  bool enabled() const { return !digests_.empty(); }
  // `api_key` is the api-key header; `authorization` the Authorization header (Bearer).
  bool allows(std::string_view api_key, std::string_view authorization) const;

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest digest(std::string_view key);
  bool matches(std::string_view key) const;
  std::vector<Digest> digests_;
};

}  // namespace smartlb
