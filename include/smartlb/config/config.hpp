#pragma once
// The validated configuration. Immutable once loaded: the backends become a routing snapshot,
// and what they do at run time lives in BackendStates beside it.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smartlb/config/redis_url.hpp"
#include "smartlb/config/url.hpp"
#include "smartlb/cost/price_table.hpp"

namespace smartlb::config {

// Which credential header a backend expects.
enum class AuthStyle {
  Auto,     // `x-api-key` for Claude's Messages API, `api-key` for Azure hosts and Azure-style
            // paths, else `Authorization: Bearer`
  ApiKey,   // always `api-key`
  Bearer,   // always `Authorization: Bearer`
  XApiKey,  // always `x-api-key` (Anthropic's API)
  Apim,     // always `Ocp-Apim-Subscription-Key` (an API Management gateway's subscription key)
  Entra,    // `Authorization: Bearer <Entra ID token>`, fetched by smartlb (BackendConfig::entra)
};
// The name BACKEND_X_AUTH and `auth:` give a style ("api-key", "x-api-key", "apim", ...), and
// the style a name gives (nullopt: none).
std::string_view to_string(AuthStyle a);
std::optional<AuthStyle> auth_style_named(std::string_view name);
// For messages: the names, as a list ("auto, api-key, bearer, x-api-key, apim or entra").
inline constexpr std::string_view kAuthStyleNames = "auto, api-key, bearer, x-api-key, apim or entra";

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
  int id = 0;        // the X of BACKEND_X_* (0 for a backend of the config file)
  std::string name;  // shown in logs and the `x-smartlb-backend` header
  BackendUrl url;
  int priority = 1;             // lower is preferred
  std::uint32_t weight = 1;     // relative share inside its priority group
  std::string api_key;          // secret: never logged or echoed
  std::string key_setting;      // where the key is configured, for messages (BACKEND_2_APIKEY)
  std::string deployment_name;  // when set, replaces the deployment path segment
  AuthStyle auth = AuthStyle::Auto;
  bool azure_host = false;  // *.openai.azure.com and friends
  std::int64_t tpm = 0;     // declared tokens per minute per deployment (0: not declared)
  std::int64_t rpm = 0;     // declared requests per minute per deployment (0: not declared)
  std::string quota_group;  // deployments naming one group share its declared quota
  // Where the stateful objects it makes live (docs/stateful-apis.md): "" is its URL's origin and
  // base path; backends naming the same resource share their objects' ids.
  std::string resource;
  EntraCredentialConfig entra;  // used when auth == AuthStyle::Entra
  // Its health probe (HEALTH_PROBE_SECONDS): how often (nullopt: the process's; 0: never), and
  // what is asked ("": its models list, /openai/models or /v1/models after its base path).
  std::optional<std::chrono::seconds> health_probe_interval;
  std::string health_probe_path;
};

// A deployment (Azure) or model (OpenAI-style) on a backend: what a rule routes to.
struct TargetConfig {
  std::string id;       // what rules' `target` names, e.g. "eastus/gpt-4o"
  std::string backend;  // a backend's name
  // The name the backend knows: it replaces the client's deployment path segment, or the
  // body's `model` of /v1-style requests. Empty: the client's name passes through.
  std::string upstream_name;
  std::vector<std::string> aliases;  // more client-facing model names it serves
  std::string quota_group;           // targets naming one group share its declared quota
  // Declared quota per minute (model_configs[].usage_limits; 0: none).
  std::int64_t tpm = 0, rpm = 0;
  // model_configs[].failure_tolerance: more failover outcomes than this in a rolling minute
  // take the target out for `breaker_cooldown` (0 failures allowed and no cooldown: off).
  std::optional<std::uint32_t> allowed_failures_per_minute;
  std::chrono::seconds breaker_cooldown{0};
  // model_configs[].first_token_timeout_seconds (0: off); nullopt: the process's setting.
  std::optional<std::chrono::milliseconds> first_token_timeout;
  // Client-facing names this target answers to: its id, the part of the id after its last
  // '/', its upstream name and its aliases.
  bool serves(std::string_view model) const;
};

// TrueFoundry's retry_config of a target: the same target tried again, `delay` later, up to
// `attempts` more times, on these statuses (its documented defaults).
struct RetryConfig {
  std::uint32_t attempts = 2;
  std::chrono::milliseconds delay{100};
  std::vector<unsigned> on_status = {429, 500, 502, 503};
};

// A member of a rule's load_balance_targets.
struct RuleTarget {
  std::string target;  // a TargetConfig id
  std::uint32_t weight = 1;
  int priority = 1;
  // override_params, each top-level key with its value as JSON text (nullopt: remove the key).
  std::vector<std::pair<std::string, std::optional<std::string>>> override_params;
  // TrueFoundry's per-target options, when the file gives them (docs/routing-policy.md, "From
  // TrueFoundry"); without them smartlb's own behaviour: fail over at once on what judge_status
  // says, each target once, every target a fallback candidate.
  std::optional<RetryConfig> retry{};
  std::optional<std::vector<unsigned>> fallback_status{};  // the statuses that move to another target
  bool fallback_candidate = true;                          // false: never tried as a fallback
};

enum class RuleType { Priority, Weight, Latency };

struct RuleConfig {
  std::string id;
  RuleType type = RuleType::Priority;
  // when: every listed condition must hold (empty: matches every request).
  std::vector<std::string> subjects;                          // any of them
  std::vector<std::string> models;                            // any of them
  std::vector<std::pair<std::string, std::string>> metadata;  // all of them
  std::vector<RuleTarget> targets;
  // Latency rules.
  std::chrono::minutes lookback{10};
  double allowed_latency_overhead_percentage = 0;
  // Affinity: requests with the same key keep to one target while it is available.
  bool affinity = false;
  std::string affinity_header;  // the key's header (a virtual model's sticky routing); "": smartlb's own keys
  // Slow start: after a cooldown ends, a target's share ramps back over this long (0: off).
  std::chrono::seconds slow_start{0};
  bool implicit = false;  // the default rule made from BACKEND_X_* (or from a file without rules)
};

// A client's budget (API Management's token-limit and token-quota): 0 is no limit. The minute
// limits slide; the day and month quotas are calendar periods in UTC.
struct ClientLimits {
  std::int64_t tokens_per_minute = 0;
  std::int64_t requests_per_minute = 0;
  std::int64_t tokens_per_day = 0;
  std::int64_t tokens_per_month = 0;
  // In the prices' currency (docs/operations.md#cost), as pico-units; calendar periods too.
  cost::PicoUnits cost_per_day = 0;
  cost::PicoUnits cost_per_month = 0;
  // Requests of the caller being answered at once (a stream until it ends); 0: no cap.
  std::int64_t max_in_flight = 0;
  bool any() const {
    return tokens_per_minute || requests_per_minute || tokens_per_day || tokens_per_month || cost_per_day ||
           cost_per_month || max_in_flight;
  }
  bool counts_cost() const { return cost_per_day || cost_per_month; }
  bool operator==(const ClientLimits&) const = default;
};

// A client key of the config file's `clients` section.
struct ClientConfig {
  std::string name;
  std::string key;         // plain (secret), or empty when `key_sha256` is given
  std::string key_sha256;  // 64 hex digits
  std::vector<std::string> subjects;
  ClientLimits limits;  // this client's own budget
};

// Limits by subject (`subject_limits`): `shared`, one budget for everyone carrying the subject
// (a team's); else each caller carrying it gets a budget of its own. Subject "*" is every caller.
struct SubjectLimit {
  std::string subject;
  bool shared = false;
  ClientLimits limits;
};

// How many of a class's requests may wait for capacity at once, per replica, by default.
inline constexpr std::uint32_t kDefaultMaxQueueLength = 1000;

// A priority class (`priority_classes`, highest first; docs/client-budgets.md): who belongs to
// it, the most of each target's quota its requests leave to what the classes above ask for, and
// how long its requests may wait for capacity instead of smartlb's own 429.
struct PriorityClassConfig {
  std::string name;
  std::uint16_t reserve_permille = 0;  // reserve_percent x 10; 0 for the first class (nothing is above it)
  std::vector<std::string> subjects;   // callers carrying any of them
  std::vector<std::string> clients;    // client entries by name (a client's `priority_class`)
  std::chrono::milliseconds max_queue{0};                   // max_queue_seconds; 0: a 429 at once
  std::uint32_t max_queue_length = kDefaultMaxQueueLength;  // waiting at once, per replica
  bool operator==(const PriorityClassConfig&) const = default;
};
inline constexpr std::size_t kMaxPriorityClasses = 8;
inline constexpr std::uint16_t kDefaultClassReserve =
    500;  // per mille: the most a class below the first leaves
// interactive, then batch (kDefaultClassReserve).
std::vector<PriorityClassConfig> default_priority_classes();

// An Entra ID tenant whose access tokens (JWT) clients may present as Bearer values: the file's
// `token_issuers`, or CLIENT_ENTRA_* (docs/keyless-azure.md, "Clients with Entra ID tokens").
struct TokenIssuerConfig {
  std::string name;                         // the client name of its callers (logs, metrics)
  std::string tenant_id;                    // a GUID: tokens carry it in `iss`
  std::vector<std::string> audiences;       // `aud` must be one of them
  std::vector<std::string> required_roles;  // when set, `roles` must hold one of them
  std::string authority_host;               // "": AZURE_AUTHORITY_HOST or https://login.microsoftonline.com
  std::string discovery_url;  // "": <authority_host>/<tenant_id>/v2.0/.well-known/openid-configuration
  std::chrono::seconds clock_skew{60};  // allowed on exp and nbf
};

// What the config file adds beside the environment's backends.
struct Policy {
  std::string file;  // the file it came from ("" for env only)
  std::string hash;  // SHA-256 of the file's bytes, hex ("" for env only)
  std::vector<TargetConfig> targets;
  std::vector<RuleConfig> rules;  // in order; the implicit default rule last when present
  std::vector<ClientConfig> clients;
  std::vector<SubjectLimit> subject_limits;  // CLIENT_TOKENS_PER_MINUTE & co. make a "*" entry
  std::vector<TokenIssuerConfig> token_issuers;
  // Highest first. Empty: `interactive`, then `batch` (default_priority_classes).
  std::vector<PriorityClassConfig> priority_classes;
  cost::PriceTable prices;  // `prices`: what requests cost (empty: no cost is counted)
};

// Scale-out (docs/scale-out.md): replicas share cooldowns through Redis when `url` is set.
struct RedisConfig {
  std::optional<RedisUrl> url;             // REDIS_URL; none: every replica keeps its state to itself
  std::string key_prefix = "smartlb:";     // REDIS_KEY_PREFIX: every key and channel starts with it
  std::string ca_file;                     // REDIS_CA_FILE: CA bundle for rediss:// (else the system's)
  std::chrono::milliseconds timeout{200};  // REDIS_TIMEOUT_MS: a command slower than this = Redis lost
  std::string replica_id;                  // REPLICA_ID (default: hostname-pid)
  bool enabled() const { return url.has_value(); }
};

// Who may use the admin port (docs/operations.md): bearer tokens with a role.
enum class AdminRole : std::uint8_t {
  Read,   // /status, /metrics, the status page's data
  Write,  // the admin API's changes, and everything Read may
};
struct AdminToken {
  std::string name;  // in logs with a fingerprint: "read-1", "write-2" (ADMIN_TOKENS) or the file's name
  AdminRole role = AdminRole::Read;
  std::string token;  // secret: never logged or echoed
};
struct AdminConfig {
  // ADMIN_TOKENS, then the file's admin.tokens. None: the admin port is open for reading as it
  // always was, and its write endpoints refuse every request.
  std::vector<AdminToken> tokens;
  bool metrics_open = false;  // ADMIN_METRICS_OPEN: /metrics needs no token even with tokens set
};

struct Config {
  std::vector<BackendConfig> backends;  // the environment's (ordered by id), then the file's
  Policy policy;

  std::string listen_address = "0.0.0.0";
  std::uint16_t port = 8080;
  std::uint16_t admin_port = 9090;  // 0 disables the admin listener
  unsigned threads = 0;             // 0: the CPUs the process may use (config/cpu_limit)

  std::chrono::seconds http_timeout{100};     // idle time waiting on a backend
  std::chrono::seconds connect_timeout{10};   // TCP connect + TLS handshake
  std::chrono::seconds request_timeout{300};  // all attempts of one request, before headers
  // A request that only smartlb's own prediction refuses (reports, a declared quota, a class's
  // reserve) waits instead, once, when room comes back within this, whatever its class's
  // max_queue_seconds (CAPACITY_GRACE_MS; 0: off). A backend's own 429 is answered at once.
  std::chrono::milliseconds capacity_grace{100};
  // A streamed request's wait for its first content, per attempt, before it fails over as stalled
  // (FIRST_TOKEN_TIMEOUT_SECONDS): nullopt learned per deployment (routing/first_token.hpp), 0 off.
  std::optional<std::chrono::milliseconds> first_token_timeout;
  // Each backend's health probe: every this long (0: off), each answered within the timeout.
  std::chrono::seconds health_probe_interval{10};
  std::chrono::seconds health_probe_timeout{3};
  std::chrono::seconds client_idle_timeout{75};
  std::chrono::seconds shutdown_timeout{30};  // drain deadline on SIGTERM
  // A Realtime WebSocket session: closed after this long without a frame either way, and after
  // this long whatever it does.
  std::chrono::seconds realtime_idle_timeout{300};
  std::chrono::seconds realtime_max_session{3600};

  std::chrono::milliseconds default_cooldown{10'000};
  std::chrono::milliseconds min_cooldown{100};
  std::chrono::milliseconds max_cooldown{300'000};
  // The window declared quotas are enforced over (Azure's per-minute quota, or shorter).
  std::chrono::milliseconds quota_window{60'000};
  // Route ahead of the 429 on the backends' x-ratelimit-remaining-* reports (ROUTE_ON_REMAINING).
  bool route_on_remaining = true;

  // A request body (JSON) is buffered whole (so that it can be sent again on failover) within
  // max_request_body_bytes; an upload (multipart, raw bytes) over stream_request_body_bytes is
  // streamed to one backend, within max_streamed_body_bytes (http/body_intake.hpp). The bodies
  // buffered at once, all connections together, stay within max_buffered_bodies_bytes.
  std::uint64_t max_request_body_bytes = 32ull * 1024 * 1024;
  std::uint64_t stream_request_body_bytes = 4ull * 1024 * 1024;
  std::uint64_t max_streamed_body_bytes = 512ull * 1024 * 1024;
  std::uint64_t max_buffered_bodies_bytes = 1ull << 30;
  // A 2xx event stream is held back until its first event (at most this many bytes, and the
  // header timeout), so one that starts with an error can fail over. 0: off.
  std::size_t stream_holdback_bytes = 64 * 1024;
  // GET /v1/models (and Azure's and Anthropic's) answered from the configuration (MODEL_CATALOG).
  bool model_catalog = true;
  unsigned max_header_count = 100;
  unsigned max_connections = 16384;

  std::string log_level = "info";
  std::string log_format = "text";  // text | json
  bool access_log = true;

  std::vector<std::string> client_api_keys;                  // when non-empty, clients must present one
  std::vector<TokenIssuerConfig> client_token_issuers;       // CLIENT_ENTRA_* (at most one)
  std::string upstream_ca_file;                              // extra CA bundle trusted for upstream TLS
  std::chrono::milliseconds config_watch_interval{1000};     // how often the config file is looked at
  std::chrono::milliseconds status_sample_interval{10'000};  // the status page's charts: one sample each
  RedisConfig redis;
  AdminConfig admin;
};

}  // namespace smartlb::config
