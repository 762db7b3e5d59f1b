// Workload identity (AKS, or any federated issuer): the client credentials grant with the
// federated token as a client assertion instead of a secret.
#include "smartlb/credentials/entra/token_sources.hpp"

namespace smartlb::credentials::entra {

TokenRequest workload_identity_request(const config::EntraCredentialConfig& c, std::string_view assertion) {
  TokenRequest r;
  r.method = "POST";
  r.url = c.authority_host + c.tenant_id + "/oauth2/v2.0/token";
  r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  r.form_body = "grant_type=client_credentials&client_id=" + form_encode(c.client_id) +
                "&scope=" + form_encode(c.scope) + "&client_assertion_type=" +
                form_encode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer") +
                "&client_assertion=" + form_encode(assertion);
  return r;
}

}  // namespace smartlb::credentials::entra
