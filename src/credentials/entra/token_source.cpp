#include <fstream>
#include <sstream>

#include "smartlb/credentials/entra/token_sources.hpp"

namespace smartlb::credentials::entra {

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(s).str();
}

TokenRequestResult make_token_request(const config::EntraCredentialConfig& c, const ReadFile& read) {
  TokenRequestResult r;
  switch (c.source) {
    case config::EntraSource::ClientSecret:
      r.request = client_secret_request(c);
      break;
    case config::EntraSource::WorkloadIdentity: {
      auto assertion = read(c.federated_token_file);
      // Kubernetes writes the projected token without a newline, but a hand-made file may have one.
      while (assertion && !assertion->empty() && (assertion->back() == '\n' || assertion->back() == '\r'))
        assertion->pop_back();
      if (!assertion || assertion->empty())
        r.error = "cannot read the federated token file " + c.federated_token_file +
                  " (AZURE_FEDERATED_TOKEN_FILE)";
      else
        r.request = workload_identity_request(c, *assertion);
      break;
    }
    case config::EntraSource::AppService:
      r.request = app_service_request(c);
      break;
    case config::EntraSource::Imds:
      r.request = imds_request(c);
      break;
    case config::EntraSource::Auto:
      r.error = "no Entra ID source chosen";
      break;
  }
  return r;
}

}  // namespace smartlb::credentials::entra
