#include "smartlb/config/env_settings.hpp"

#include <algorithm>
#include <cctype>

namespace smartlb::config {
namespace {

constexpr std::string_view kBackendFamily = "BACKEND_X_";

constexpr EnvSetting kSettings[] = {
    // A backend's settings; the unknown-field error lists the fields in this order.
    {"BACKEND_X_URL", "", "https://name.openai.azure.com or http://host:port (required; X = 1, 2, ...)", ""},
    {"BACKEND_X_PRIORITY", "1", "lower is preferred", ""},
    {"BACKEND_X_WEIGHT", "1", "share inside its priority group", ""},
    {"BACKEND_X_APIKEY", "", "the backend's key (in the header BACKEND_X_AUTH names)", ""},
    {"BACKEND_X_NAME", "backend-X", "shown in logs, metrics and the x-smartlb-backend header", ""},
    {"BACKEND_X_DEPLOYMENT_NAME", "",
     "replaces the deployment segment of /openai/deployments/{name}/..., and the body's model of /v1/... and "
     "/openai/v1/... requests",
     ""},
    {"BACKEND_X_AUTH", "auto", "auto | api-key | bearer | x-api-key | apim | entra", ""},
    {"BACKEND_X_TPM", "", "declared tokens per minute per deployment: route ahead of the backend's 429", ""},
    {"BACKEND_X_RPM", "", "declared requests per minute per deployment", ""},
    {"BACKEND_X_QUOTA_GROUP", "", "backends naming one group share one declared quota", ""},
    {"BACKEND_X_RESOURCE", "",
     "where its stateful objects (responses, files, batches, ...) live; default: its URL's origin and base "
     "path",
     ""},
    {"BACKEND_X_HEALTH_PROBE_SECONDS", "",
     "its health probe's interval (default HEALTH_PROBE_SECONDS; 0 = off)", ""},
    {"BACKEND_X_HEALTH_PROBE_PATH", "",
     "what its health probe asks for (default its models list: /openai/models or /v1/models)", ""},
    {"BACKEND_X_ENTRA_SCOPE", "https://cognitiveservices.azure.com/.default", "entra: the token's scope", ""},
    {"BACKEND_X_ENTRA_SOURCE", "auto", "entra: auto | client-secret | workload-identity | app-service | imds",
     ""},
    {"BACKEND_X_ENTRA_CLIENT_ID", "", "entra: a user-assigned managed identity's client id", ""},
    // Entra ID credentials, read as Azure's SDKs read them (docs/keyless-azure.md).
    {"AZURE_TENANT_ID", "", "entra client-secret and workload-identity: the tenant", ""},
    {"AZURE_CLIENT_ID", "", "entra: the app's client id, or a user-assigned managed identity's", ""},
    {"AZURE_CLIENT_SECRET", "", "entra client-secret: the app's secret", ""},
    {"AZURE_FEDERATED_TOKEN_FILE", "", "entra workload-identity: the token file (re-read on every refresh)",
     ""},
    {"AZURE_AUTHORITY_HOST", "https://login.microsoftonline.com/", "where Entra ID tokens and keys come from",
     ""},
    {"IDENTITY_ENDPOINT", "", "entra app-service: the identity endpoint", ""},
    {"IDENTITY_HEADER", "", "entra app-service: the identity header's secret", ""},
    {"AZURE_POD_IDENTITY_AUTHORITY_HOST", "http://169.254.169.254",
     "entra imds: the identity endpoint's host", ""},
    // Routing.
    {"QUOTA_WINDOW_SECONDS", "60", "window the declared quotas are enforced over", ""},
    {"ROUTE_ON_REMAINING", "on", "route ahead of the 429 on the backends' x-ratelimit-remaining-* reports",
     ""},
    {"DEFAULT_COOLDOWN_SECONDS", "10", "a backend's cooldown when its failure gave no hint", ""},
    {"MAX_COOLDOWN_SECONDS", "300", "the longest cooldown, whatever a backend asks", ""},
    // Listeners, threads, timeouts and limits.
    {"PORT", "8080", "the API port", ""},
    {"LISTEN_ADDRESS", "0.0.0.0", "the address both listeners bind", ""},
    {"ADMIN_PORT", "9090", "/healthz, /readyz, /metrics, /status and the status page (0 = off)", ""},
    {"ADMIN_TOKENS", "",
     "read:TOKEN,write:TOKEN,...: bearer tokens for the admin port and its API (docs/operations.md); unset: "
     "/status and /metrics open, every change refused",
     "admin.tokens"},
    {"ADMIN_METRICS_OPEN", "false",
     "/metrics needs no token even with ADMIN_TOKENS set (Prometheus scrapers)", "admin.metrics_open"},
    {"THREADS", "0", "worker threads (0 = the CPUs it may use)", ""},
    {"HTTP_TIMEOUT_SECONDS", "100", "per attempt: a backend's response headers, then each pause in its body",
     ""},
    {"CONNECT_TIMEOUT_SECONDS", "10", "a backend's lookup, TCP connect and TLS handshake, each", ""},
    {"HEALTH_PROBE_SECONDS", "10", "each backend's health probe (its models list), every so often (0 = off)",
     "backends[].health_probe_seconds"},
    {"HEALTH_PROBE_TIMEOUT_SECONDS", "3", "a health probe without an answer by then says the backend is down",
     ""},
    {"FIRST_TOKEN_TIMEOUT_SECONDS", "",
     "a streamed request's wait for its first content before it fails over (unset: learned; 0: off)",
     "model_configs[].first_token_timeout_seconds"},
    {"REQUEST_TIMEOUT_SECONDS", "300", "all attempts of a request, until a backend's response headers", ""},
    {"CAPACITY_GRACE_MS", "100",
     "a request only smartlb's prediction refuses waits instead when room comes back within this (0 = off)",
     ""},
    {"CLIENT_IDLE_TIMEOUT_SECONDS", "75", "a client connection's wait for its next request", ""},
    {"SHUTDOWN_TIMEOUT_SECONDS", "30", "the drain after SIGTERM", ""},
    {"REALTIME_IDLE_TIMEOUT_SECONDS", "300",
     "a Realtime WebSocket session with no frame either way is closed", ""},
    {"REALTIME_MAX_SESSION_SECONDS", "3600", "a Realtime WebSocket session is closed after this long", ""},
    {"MAX_REQUEST_BODY_BYTES", "33554432", "a larger request body (JSON) gets 413; uploads over it stream",
     ""},
    {"STREAM_REQUEST_BODY_BYTES", "4194304",
     "a larger upload (multipart, bytes) is streamed to one backend, not buffered (no failover once sent)",
     ""},
    {"MAX_STREAMED_BODY_BYTES", "536870912", "a larger streamed upload gets 413", ""},
    {"MAX_BUFFERED_BODIES_BYTES", "1073741824",
     "request bodies buffered at once, all connections together: past it, 503 until some end", ""},
    {"MAX_HEADER_COUNT", "100", "more request header fields get 400", ""},
    {"MODEL_CATALOG", "on", "GET /v1/models lists smartlb's model names (off: a backend's list)", ""},
    {"MAX_CONNECTIONS", "16384", "open client connections", ""},
    {"STREAM_HOLDBACK_BYTES", "65536", "an event stream's start held back to fail over an error (0 = off)",
     ""},
    // Logs.
    {"LOG_LEVEL", "info", "trace | debug | info | warn | error | critical | off", ""},
    {"LOG_FORMAT", "text", "text | json", ""},
    {"ACCESS_LOG", "on", "a line per request", ""},
    // Clients.
    {"CLIENT_API_KEYS", "", "comma-separated keys clients must present (unset: no check)",
     "clients (with key or key_sha256)"},
    {"CLIENT_TOKENS_PER_MINUTE", "", "every caller's budget of tokens per minute (docs/client-budgets.md)",
     "subject_limits (subject \"*\")"},
    {"CLIENT_REQUESTS_PER_MINUTE", "", "every caller's budget of requests per minute",
     "subject_limits (subject \"*\")"},
    {"CLIENT_TOKENS_PER_DAY", "", "every caller's budget of tokens per day (UTC)",
     "subject_limits (subject \"*\")"},
    {"CLIENT_TOKENS_PER_MONTH", "", "every caller's budget of tokens per month (UTC)",
     "subject_limits (subject \"*\")"},
    {"CLIENT_MAX_IN_FLIGHT", "", "every caller's cap on requests answered at once (streams until they end)",
     "subject_limits (subject \"*\")"},
    {"CLIENT_ENTRA_TENANT_ID", "", "clients may present this tenant's Entra ID tokens (Bearer JWT)",
     "token_issuers"},
    {"CLIENT_ENTRA_AUDIENCE", "", "comma-separated: a token's aud must be one of them", "token_issuers"},
    {"CLIENT_ENTRA_ROLES", "", "comma-separated: a token's roles must hold one of them", "token_issuers"},
    {"CLIENT_ENTRA_NAME", "entra", "the client name of token callers in logs and metrics", "token_issuers"},
    {"CLIENT_ENTRA_DISCOVERY_URL", "",
     "where the tenant's signing keys are found (default: its OpenID metadata)", "token_issuers"},
    {"UPSTREAM_CA_FILE", "", "extra CA bundle to trust for backend TLS", ""},
    // The config file and the status page.
    {"CONFIG_FILE", "", "the routing policy file (as --config)", ""},
    {"CONFIG_WATCH_INTERVAL_MS", "1000", "how often the file is checked for a change", ""},
    {"STATUS_SAMPLE_INTERVAL_MS", "10000", "how often the status page's charts get a sample", ""},
    // Scale-out (docs/scale-out.md).
    {"REDIS_URL", "",
     "redis://[user:password@]host[:port][/db] or rediss://: replicas share cooldowns, quotas and budgets "
     "through Redis; unset: each keeps its own",
     "redis.url"},
    {"REDIS_KEY_PREFIX", "smartlb:", "the start of every key and channel", "redis.key_prefix"},
    {"REDIS_CA_FILE", "", "CA bundle for rediss:// (else UPSTREAM_CA_FILE)", "redis.ca_file"},
    {"REDIS_TIMEOUT_MS", "200", "a command unanswered this long: Redis is lost", "redis.timeout_ms"},
    {"REPLICA_ID", "hostname-pid", "this replica's name in /status and in Redis", "redis.replica_id"},
    // Traces (docs/observability.md, "Traces"): OpenTelemetry's own variables, read by tracing/.
    {"OTEL_EXPORTER_OTLP_ENDPOINT", "",
     "an OTLP/HTTP collector: traces go to it + /v1/traces (unset: no tracing)", ""},
    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", "the URL traces go to, as it is", ""},
    {"OTEL_EXPORTER_OTLP_HEADERS", "", "key=value,... sent with every export (values never logged)", ""},
    {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "http/json only", ""},
    {"OTEL_EXPORTER_OTLP_TIMEOUT", "10000", "milliseconds for each step of an export", ""},
    {"OTEL_EXPORTER_OTLP_CERTIFICATE", "", "CA bundle for an https:// collector", ""},
    {"OTEL_SERVICE_NAME", "smartlb", "the traces' service.name", ""},
    {"OTEL_RESOURCE_ATTRIBUTES", "", "key=value,... more resource attributes", ""},
    {"OTEL_TRACES_SAMPLER", "parentbased_always_on",
     "always_on | always_off | traceidratio | parentbased_always_on | parentbased_always_off | "
     "parentbased_traceidratio",
     ""},
    {"OTEL_TRACES_SAMPLER_ARG", "1.0", "the traceidratio samplers' ratio (0 to 1)", ""},
    {"OTEL_BSP_SCHEDULE_DELAY", "5000", "milliseconds between exports when no batch fills up", ""},
    {"OTEL_BSP_MAX_QUEUE_SIZE", "2048", "spans waiting for export, at most (more are dropped)", ""},
    {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512", "spans in one export, at most", ""},
    {"OTEL_SDK_DISABLED", "false", "true: no tracing", ""},
    {"OTEL_TRACES_EXPORTER", "otlp", "otlp | none (none: no tracing)", ""},
};

// "BACKEND_12_URL" -> "BACKEND_X_URL"; any other name as it is.
std::string family_name(std::string_view name) {
  constexpr std::string_view kPrefix = "BACKEND_";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::string(name);
  const std::string_view rest = name.substr(kPrefix.size());
  const auto underscore = rest.find('_');
  if (underscore == 0 || underscore == std::string_view::npos ||
      !std::all_of(rest.begin(), rest.begin() + underscore, [](unsigned char c) { return std::isdigit(c); }))
    return std::string(name);
  return std::string(kBackendFamily) + std::string(rest.substr(underscore + 1));
}

// `text` written from `column` on (the line's start is written already), its words wrapped
// onto lines that start with `indent` spaces and end before `width` where the words allow.
void append_wrapped(std::string& out, std::size_t column, std::size_t indent, std::string_view text,
                    std::size_t width) {
  bool first = true;
  while (!text.empty()) {
    const auto space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (!first && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  }
}

}  // namespace

std::span<const EnvSetting> env_settings() { return kSettings; }

const EnvSetting* find_env_setting(std::string_view name) {
  const std::string key = family_name(name);
  for (const EnvSetting& s : kSettings)
    if (s.name == key) return &s;
  return nullptr;
}

std::vector<std::string_view> backend_fields() {
  std::vector<std::string_view> fields;
  for (const EnvSetting& s : kSettings)
    if (s.name.substr(0, kBackendFamily.size()) == kBackendFamily)
      fields.push_back(s.name.substr(kBackendFamily.size()));
  return fields;
}

std::string env_settings_help(std::span<const std::string_view> only) {
  constexpr std::size_t kMeaningColumn = 29, kWidth = 80;
  std::string out;
  for (const EnvSetting& s : kSettings) {
    if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
    std::string left = "  " + std::string(s.name);
    if (!s.default_text.empty()) left += " (" + std::string(s.default_text) + ")";
    if (left.size() + 2 > kMeaningColumn) {  // a long name: its meaning on the next line
      out += left + "\n";
      left.clear();
    }
    left.resize(kMeaningColumn, ' ');
    out += left;
    append_wrapped(out, left.size(), kMeaningColumn, s.meaning, kWidth);
    out += "\n";
  }
  return out;
}

}  // namespace smartlb::config
