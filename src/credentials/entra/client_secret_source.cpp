// Client secret (a service principal): the OAuth 2.0 client credentials grant against the
// tenant's v2.0 token endpoint.
#include "smartlb/credentials/entra/token_sources.hpp"

namespace smartlb::credentials::entra {

TokenRequest client_secret_request(const config::EntraCredentialConfig& c) {
  TokenRequest r;
  r.method = "POST";
  r.url = c.authority_host + c.tenant_id + "/oauth2/v2.0/token";
  r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  r.form_body = "grant_type=client_credentials&client_id=" + form_encode(c.client_id) +
                "&scope=" + form_encode(c.scope) + "&client_secret=" + form_encode(c.client_secret);
  return r;
}

}  // namespace smartlb::credentials::entra
