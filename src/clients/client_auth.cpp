#include "smartlb/clients/client_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace smartlb {

ClientAuthenticator::ClientAuthenticator(const std::vector<std::string>& keys) {
  for (const auto& k : keys) digests_.push_back(digest(k));
}

ClientAuthenticator::Digest ClientAuthenticator::digest(std::string_view key) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), d.data());
  return d;
}

bool ClientAuthenticator::matches(std::string_view key) const {
  if (key.empty()) return false;
  const Digest d = digest(key);
  bool found = false;
  for (const auto& candidate : digests_)  // no early exit: the time does not depend on which
    found |= CRYPTO_memcmp(candidate.data(), d.data(), d.size()) == 0;
  return found;
}

bool ClientAuthenticator::allows(std::string_view api_key, std::string_view authorization) const {
  if (!enabled()) return true;
  if (matches(api_key)) return true;
  constexpr std::string_view bearer = "Bearer ";
  if (authorization.size() > bearer.size() && authorization.substr(0, bearer.size()) == bearer)
    return matches(authorization.substr(bearer.size()));
  return false;
}

}  // namespace smartlb
