// App Service, Functions and Container Apps managed identity: the local identity endpoint the
// platform announces in IDENTITY_ENDPOINT, guarded by IDENTITY_HEADER.
#include "smartlb/credentials/entra/token_sources.hpp"

namespace smartlb::credentials::entra {

TokenRequest app_service_request(const config::EntraCredentialConfig& c) {
  TokenRequest r;
  r.method = "GET";
  r.url = c.identity_endpoint + (c.identity_endpoint.find('?') == std::string::npos ? "?" : "&") +
          "api-version=2019-08-01&resource=" + form_encode(resource_of_scope(c.scope));
  if (!c.client_id.empty()) r.url += "&client_id=" + form_encode(c.client_id);
  r.headers = {{"X-IDENTITY-HEADER", c.identity_header}, {"Accept", "application/json"}};
  return r;
}

}  // namespace smartlb::credentials::entra
