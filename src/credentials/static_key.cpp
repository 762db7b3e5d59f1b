#include "smartlb/credentials/static_key.hpp"

namespace smartlb {

AuthStyle effective_auth(const BackendConfig& b, ApiFamily family) {
  if (b.auth != AuthStyle::Auto) return b.auth;
  if (family == ApiFamily::Anthropic) return AuthStyle::XApiKey;
  if (b.azure_host || family == ApiFamily::Azure) return AuthStyle::ApiKey;
  return AuthStyle::Bearer;
}

CredentialFields static_key_fields(const BackendConfig& b, std::string_view bearer, ApiFamily family,
                                   const CredentialFields& client) {
  if (b.api_key.empty()) return client;
  CredentialFields out;
  switch (effective_auth(b, family)) {
    case AuthStyle::ApiKey:
      out.add("api-key", b.api_key);
      break;
    case AuthStyle::XApiKey:
      out.add("x-api-key", b.api_key);
      break;
    case AuthStyle::Apim:
      out.add("Ocp-Apim-Subscription-Key", b.api_key);
      break;
    default:  // Bearer (an Entra ID backend's token is written by its TokenCell)
      out.add("Authorization", bearer);
      break;
  }
  return out;
}

}  // namespace smartlb
