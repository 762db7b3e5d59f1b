// The instance metadata service (VMs, VM scale sets, AKS nodes): a link-local endpoint that
// wants `Metadata: true` (so that a server-side request forgery cannot reach it by accident).
#include "smartlb/credentials/entra/token_sources.hpp"

namespace smartlb::credentials::entra {

TokenRequest imds_request(const config::EntraCredentialConfig& c) {
  TokenRequest r;
  r.method = "GET";
  r.url = c.imds_endpoint + "?api-version=2018-02-01&resource=" + form_encode(resource_of_scope(c.scope));
  if (!c.client_id.empty()) r.url += "&client_id=" + form_encode(c.client_id);
  r.headers = {{"Metadata", "true"}, {"Accept", "application/json"}};
  return r;
}

}  // namespace smartlb::credentials::entra
