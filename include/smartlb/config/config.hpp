#pragma once
// The validated configuration. Immutable once loaded: the backends become a routing snapshot,
// and what they do at run time lives in BackendStates beside it.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "smartlb/config/url.hpp"

namespace smartlb {

// Which credential header a backend expects.
enum class AuthStyle {
  Auto,    // `api-key` for Azure hosts and Azure-style paths, else `Authorization: Bearer`
  ApiKey,  // always `api-key`
  Bearer,  // always `Authorization: Bearer`
  Entra,   // `Authorization: Bearer <Entra ID token>`, fetched by smartlb (BackendConfig::entra)
};

// Where an Entra ID token comes from. Auto picks the first source whose variables are set, in
// DefaultAzureCredential's order: ClientSecret, WorkloadIdentity, AppService, Imds.
enum class EntraSource { Auto, ClientSecret, WorkloadIdentity, AppService, Imds };

// An Entra ID credential of a backend, resolved from BACKEND_X_ENTRA_* and the process's
// AZURE_* / IDENTITY_* variables: everything a token request needs.
struct EntraCredentialConfig {
  EntraSource source = EntraSource::Auto;  // never Auto once loaded
  std::string scope = "https://cognitiveservices.azure.com/.default";
  std::string tenant_id;             // client secret, workload identity
  std::string client_id;             // the app (client secret, workload identity) or a user-assigned identity
  std::string client_secret;         // secret: never logged or echoed
  std::string federated_token_file;  // workload identity: re-read on every refresh
  std::string authority_host = "https://login.microsoftonline.com/";  // AZURE_AUTHORITY_HOST
  std::string identity_endpoint;  // App Service / Container Apps: IDENTITY_ENDPOINT
  std::string identity_header;    // secret: IDENTITY_HEADER
  std::string imds_endpoint = "http://169.254.169.254/metadata/identity/oauth2/token";
};

struct BackendConfig {
  int id = 0;        // the X of BACKEND_X_*
  std::string name;  // shown in logs and the `x-smartlb-backend` header
  BackendUrl url;
  int priority = 1;             // lower is preferred
  std::uint32_t weight = 1;     // relative share inside its priority group
  std::string api_key;          // secret: never logged or echoed
  std::string key_setting;      // where the key is configured, for messages (BACKEND_2_APIKEY)
  std::string deployment_name;  // when set, replaces the deployment path segment
  AuthStyle auth = AuthStyle::Auto;
  bool azure_host = false;      // *.openai.azure.com and friends
  std::int64_t tpm = 0;         // declared tokens per minute per deployment (0: not declared)
  std::int64_t rpm = 0;         // declared requests per minute per deployment (0: not declared)
  EntraCredentialConfig entra;  // used when auth == AuthStyle::Entra
};

struct Config {
  std::vector<BackendConfig> backends;  // ordered by id

  std::string listen_address = "0.0.0.0";
  std::uint16_t port = 8080;
  std::uint16_t admin_port = 9090;  // 0 disables the admin listener
  unsigned threads = 0;             // 0: the CPUs the process may use (config/cpu_limit)

  std::chrono::seconds http_timeout{100};     // idle time waiting on a backend
  std::chrono::seconds connect_timeout{10};   // TCP connect + TLS handshake
  std::chrono::seconds request_timeout{300};  // all attempts of one request, before headers
  std::chrono::seconds client_idle_timeout{75};
  std::chrono::seconds shutdown_timeout{30};  // drain deadline on SIGTERM

  std::chrono::milliseconds default_cooldown{10'000};
  std::chrono::milliseconds min_cooldown{100};
  std::chrono::milliseconds max_cooldown{300'000};
  // The window declared quotas are enforced over (Azure's per-minute quota, or shorter).
  std::chrono::milliseconds quota_window{60'000};

  std::uint64_t max_request_body_bytes = 32ull * 1024 * 1024;
  unsigned max_header_count = 100;
  unsigned max_connections = 16384;

  std::string log_level = "info";
  std::string log_format = "text";  // text | json
  bool access_log = true;

  std::vector<std::string> client_api_keys;  // when non-empty, clients must present one
  std::string upstream_ca_file;              // extra CA bundle trusted for upstream TLS
};

}  // namespace smartlb
