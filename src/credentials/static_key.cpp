#include "smartlb/credentials/static_key.hpp"

namespace smartlb {

CredentialFields static_key_fields(const BackendConfig& b, std::string_view bearer, bool azure_path,
                                   const ClientCredential& client) {
  CredentialFields out;
  if (b.api_key.empty()) {
    if (!client.api_key.empty()) out.fields[out.count++] = {"api-key", client.api_key};
    if (!client.authorization.empty()) out.fields[out.count++] = {"Authorization", client.authorization};
    return out;
  }
  const bool api_key_style =
      b.auth == AuthStyle::ApiKey || (b.auth == AuthStyle::Auto && (b.azure_host || azure_path));
  if (api_key_style)
    out.fields[out.count++] = {"api-key", b.api_key};
  else
    out.fields[out.count++] = {"Authorization", bearer};
  return out;
}

}  // namespace smartlb
