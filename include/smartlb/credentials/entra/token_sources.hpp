#pragma once
// The token request of each Entra ID source, exactly as Azure documents it (one file each in
// src/credentials/entra/), and the one for a backend's configured source.
#include <functional>
#include <optional>
#include <string>

#include "smartlb/config/config.hpp"
#include "smartlb/credentials/entra/token_request.hpp"

namespace smartlb::credentials::entra {

// POST {authority}{tenant}/oauth2/v2.0/token, grant_type=client_credentials with client_secret.
TokenRequest client_secret_request(const config::EntraCredentialConfig& c);

// The same endpoint with client_assertion = the federated token (the file's contents, read by
// the caller on every refresh: it rotates).
TokenRequest workload_identity_request(const config::EntraCredentialConfig& c, std::string_view assertion);

// GET {IDENTITY_ENDPOINT}?api-version=2019-08-01&resource=...[&client_id=...] with
// X-IDENTITY-HEADER.
TokenRequest app_service_request(const config::EntraCredentialConfig& c);

// GET {imds}?api-version=2018-02-01&resource=...[&client_id=...] with Metadata: true.
TokenRequest imds_request(const config::EntraCredentialConfig& c);

// Reads a file whole; nullopt when it cannot be read.
using ReadFile = std::function<std::optional<std::string>(const std::string& path)>;
std::optional<std::string> read_whole_file(const std::string& path);

// The request for the configured source (the federated token file read through `read`).
TokenRequestResult make_token_request(const config::EntraCredentialConfig& c,
                                      const ReadFile& read = read_whole_file);

}  // namespace smartlb::credentials::entra
