#include "smartlb/credentials/static_key.hpp"

namespace smartlb::credentials {

config::AuthStyle effective_auth(const config::BackendConfig& b, http::ApiFamily family) {
  if (b.auth != config::AuthStyle::Auto) return b.auth;
  if (family == http::ApiFamily::Anthropic) return config::AuthStyle::XApiKey;
  if (b.azure_host || family == http::ApiFamily::Azure) return config::AuthStyle::ApiKey;
  return config::AuthStyle::Bearer;
}

CredentialFields static_key_fields(const config::BackendConfig& b, std::string_view bearer,
                                   http::ApiFamily family, const CredentialFields& client) {
  if (b.api_key.empty()) return client;
  CredentialFields out;
  switch (effective_auth(b, family)) {
    case config::AuthStyle::ApiKey:
      out.add("api-key", b.api_key);
      break;
    case config::AuthStyle::XApiKey:
      out.add("x-api-key", b.api_key);
      break;
    case config::AuthStyle::Apim:
      out.add("Ocp-Apim-Subscription-Key", b.api_key);
      break;
    default:  // Bearer (an Entra ID backend's token is written by its TokenCell)
      out.add("Authorization", bearer);
      break;
  }
  return out;
}

}  // namespace smartlb::credentials
