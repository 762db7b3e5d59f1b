#pragma once
// A backend's Entra ID credential from the environment: BACKEND_X_ENTRA_* for the backend, and
// the process-wide variables Azure's SDKs read (AZURE_TENANT_ID, AZURE_CLIENT_ID,
// AZURE_CLIENT_SECRET, AZURE_FEDERATED_TOKEN_FILE, AZURE_AUTHORITY_HOST, IDENTITY_ENDPOINT,
// IDENTITY_HEADER, AZURE_POD_IDENTITY_AUTHORITY_HOST).
//
// `auto` chooses like DefaultAzureCredential, from the variables that are set:
//   1. client secret       AZURE_TENANT_ID + AZURE_CLIENT_ID + AZURE_CLIENT_SECRET
//   2. workload identity   AZURE_TENANT_ID + AZURE_CLIENT_ID + AZURE_FEDERATED_TOKEN_FILE
//   3. App Service / Container Apps managed identity   IDENTITY_ENDPOINT + IDENTITY_HEADER
//   4. the instance metadata endpoint (IMDS: VMs, AKS nodes), which needs nothing
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/config/config.hpp"
#include "smartlb/config/config_env.hpp"

namespace smartlb::config {

std::string_view to_string(EntraSource s);  // auto, client-secret, workload-identity, app-service, imds
std::optional<EntraSource> parse_entra_source(std::string_view text);

// The source `auto` stands for, given which variables are set.
EntraSource choose_entra_source(const EnvMap& env);

// A backend's own Entra settings, wherever they are configured, with the names messages use
// for them ("BACKEND_2_ENTRA_SOURCE", or a config file's "backends[1].entra.source").
struct EntraBackendSettings {
  const std::string* source = nullptr;  // null: not set
  const std::string* scope = nullptr;
  const std::string* client_id = nullptr;
  std::string source_name, scope_name, client_id_name;
};

// Fills `out` from a backend's settings and the process-wide variables in `env`. Returns the
// problems, each "NAME: what is wrong" (never a secret's value).
std::vector<std::string> resolve_entra_credential(const EnvMap& env, const EntraBackendSettings& backend,
                                                  EntraCredentialConfig& out);

// The same for the backend whose variables start with `prefix` ("BACKEND_2_").
std::vector<std::string> load_entra_credential(const EnvMap& env, const std::string& prefix,
                                               EntraCredentialConfig& out);

}  // namespace smartlb::config
