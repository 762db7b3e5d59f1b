#include "smartlb/config/config_env.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <set>

#include <unistd.h>

#include "smartlb/config/admin_tokens.hpp"
#include "smartlb/config/entra_env.hpp"
#include "smartlb/config/env_settings.hpp"
#include "smartlb/config/values.hpp"
#include "smartlb/http/header_rules.hpp"

extern char** environ;

namespace smartlb::config {
namespace {

// Collects errors, each prefixed by the variable it is about. Never puts a secret's value
// in a message.
class Problems {
 public:
  void error(const std::string& var, const std::string& what) { errors.push_back(var + ": " + what); }
  void warn(const std::string& var, const std::string& what) { warnings.push_back(var + ": " + what); }
  std::vector<std::string> errors, warnings;
};

template <class Int>
std::optional<Int> parse_integer(std::string_view v) {
  Int n{};
  if (v.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || p != v.data() + v.size()) return std::nullopt;
  return n;
}

// Every variable read is one of config/env_settings.hpp's table, which --help and the docs
// follow: a name missing there fails here, in a debug build, at its first read.
const std::string* lookup(const EnvMap& env, const std::string& key) {
  assert(find_env_setting(key) && "an environment variable missing from env_settings.cpp");
  auto it = env.find(key);
  return it == env.end() ? nullptr : &it->second;
}

// Reads an integer variable in [lo, hi] into `out`; leaves the default when unset.
template <class Int>
void read_int(const EnvMap& env, Problems& p, const std::string& var, long long lo, long long hi, Int& out) {
  const std::string* v = lookup(env, var);
  if (!v) return;
  auto n = parse_integer<long long>(*v);
  if (!n || *n < lo || *n > hi) {
    p.error(var, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                     quoted(*v));
    return;
  }
  out = static_cast<Int>(*n);
}

void read_seconds(const EnvMap& env, Problems& p, const std::string& var, long long lo, long long hi,
                  std::chrono::seconds& out) {
  long long n = out.count();
  read_int(env, p, var, lo, hi, n);
  out = std::chrono::seconds(n);
}

// Seconds that may be fractional ("0.5"), into milliseconds.
void read_fractional_seconds(const EnvMap& env, Problems& p, const std::string& var, double lo, double hi,
                             std::chrono::milliseconds& out) {
  const std::string* v = lookup(env, var);
  if (!v) return;
  double d = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
  if (v->empty() || ec != std::errc{} || ptr != v->data() + v->size() || !std::isfinite(d) || d < lo ||
      d > hi) {
    p.error(var, "must be a number of seconds from " + std::to_string(lo).substr(0, 5) + " to " +
                     std::to_string(static_cast<long long>(hi)) + ", got " + quoted(*v));
    return;
  }
  out = std::chrono::milliseconds(static_cast<long long>(std::llround(d * 1000)));
}

// REDIS_URL and the variables that go with it (docs/scale-out.md). The URL's password is never
// part of a message.
void read_redis(const EnvMap& env, Problems& p, RedisConfig& redis) {
  if (const std::string* v = lookup(env, "REDIS_URL"); v && !v->empty()) {
    auto parsed = parse_redis_url(*v);
    if (parsed.url)
      redis.url = std::move(parsed.url);
    else
      p.error("REDIS_URL", parsed.error.substr(std::string_view("REDIS_URL ").size()));
  }
  if (const std::string* v = lookup(env, "REDIS_KEY_PREFIX")) redis.key_prefix = *v;
  if (const std::string* v = lookup(env, "REDIS_CA_FILE")) {
    if (v->empty() || ::access(v->c_str(), R_OK) != 0)
      p.error("REDIS_CA_FILE", "cannot read the file " + quoted(*v));
    else
      redis.ca_file = *v;
  }
  long long ms = redis.timeout.count();
  read_int(env, p, "REDIS_TIMEOUT_MS", 10, 60'000, ms);
  redis.timeout = std::chrono::milliseconds(ms);
  if (const std::string* v = lookup(env, "REPLICA_ID")) {
    if (v->empty() || v->size() > 200)
      p.error("REPLICA_ID", "must be 1 to 200 characters");
    else
      redis.replica_id = *v;
  }
  if (redis.replica_id.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    redis.replica_id = std::string(host[0] ? host : "smartlb") + "-" + std::to_string(::getpid());
  }
}

bool read_bool(const EnvMap& env, Problems& p, const std::string& var, bool fallback) {
  const std::string* v = lookup(env, var);
  if (!v) return fallback;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "true" || s == "on" || s == "yes") return true;
  if (s == "0" || s == "false" || s == "off" || s == "no") return false;
  p.error(var, "must be true or false (on/off, 1/0), got " + quoted(*v));
  return fallback;
}

void load_backend(const EnvMap& env, Problems& p, int id, Config& cfg) {
  const std::string prefix = "BACKEND_" + std::to_string(id) + "_";
  BackendConfig b;
  b.id = id;
  b.name = "backend-" + std::to_string(id);
  b.key_setting = prefix + "APIKEY";

  const std::string url_var = prefix + "URL";
  const std::string* url = lookup(env, url_var);
  if (!url) {
    p.error(url_var, "is required because other " + prefix + "* variables are set");
  } else {
    auto parsed = parse_backend_url(*url);
    if (!parsed.url)
      p.error(url_var, parsed.error + ", got " + quoted(*url));
    else {
      b.url = std::move(*parsed.url);
      b.azure_host = is_azure_host(b.url.host);
      // The environment's backends form the default rule: every kind of client reaches them.
      if (auto w = doubled_prefix_warning(b.url, url_var, /*azure_clients=*/true)) p.warn(url_var, *w);
    }
  }
  read_int(env, p, prefix + "PRIORITY", -1'000'000, 1'000'000, b.priority);
  read_int(env, p, prefix + "WEIGHT", 1, 1'000'000, b.weight);
  read_int(env, p, prefix + "TPM", 1, 1'000'000'000'000ll, b.tpm);
  read_int(env, p, prefix + "RPM", 1, 1'000'000'000ll, b.rpm);
  if (const std::string* key = lookup(env, prefix + "APIKEY")) {
    if (const auto problem = api_key_problem(*key))
      p.error(prefix + "APIKEY", *problem);
    else
      b.api_key = *key;
  }
  if (const std::string* name = lookup(env, prefix + "NAME")) {
    if (!is_valid_name(*name))
      p.error(prefix + "NAME", "must be 1-64 characters of A-Z a-z 0-9 . _ -, got " + quoted(*name));
    else
      b.name = *name;
  }
  if (const std::string* dep = lookup(env, prefix + "DEPLOYMENT_NAME")) {
    if (!is_valid_deployment_name(*dep))
      p.error(prefix + "DEPLOYMENT_NAME",
              "must be 1-128 characters of A-Z a-z 0-9 . _ - ~, got " + quoted(*dep));
    else
      b.deployment_name = *dep;
  }
  if (const std::string* group = lookup(env, prefix + "QUOTA_GROUP")) {
    if (!is_valid_name(*group))
      p.error(prefix + "QUOTA_GROUP", "must be 1-64 characters of A-Z a-z 0-9 . _ -, got " + quoted(*group));
    else
      b.quota_group = *group;
  }
  if (const std::string* resource = lookup(env, prefix + "RESOURCE")) {
    if (!is_valid_resource_name(*resource))
      p.error(prefix + "RESOURCE",
              "must be 1-256 visible ASCII characters without spaces, got " + quoted(*resource));
    else
      b.resource = *resource;
  }
  if (lookup(env, prefix + "HEALTH_PROBE_SECONDS")) {
    std::chrono::seconds interval{0};
    read_seconds(env, p, prefix + "HEALTH_PROBE_SECONDS", 0, 3'600, interval);
    b.health_probe_interval = interval;
  }
  if (const std::string* path = lookup(env, prefix + "HEALTH_PROBE_PATH")) {
    if (!is_probe_path(*path))
      p.error(prefix + "HEALTH_PROBE_PATH",
              "must be a path starting with /, without spaces, got " + quoted(*path));
    else
      b.health_probe_path = *path;
  }
  if (const std::string* auth = lookup(env, prefix + "AUTH")) {
    if (const std::optional<AuthStyle> style = auth_style_named(*auth))
      b.auth = *style;
    else
      p.error(prefix + "AUTH", "must be " + std::string(kAuthStyleNames) + ", got " + quoted(*auth));
  }
  if (b.auth == AuthStyle::Entra) {
    b.key_setting = "the role assignment of its Entra ID identity (Cognitive Services OpenAI User)";
    if (lookup(env, prefix + "APIKEY"))
      p.error(prefix + "APIKEY",
              "must not be set with " + prefix + "AUTH=entra (the backend gets an Entra ID token)");
    for (auto& e : load_entra_credential(env, prefix, b.entra)) p.errors.push_back(std::move(e));
  } else {
    for (const char* field : {"ENTRA_SCOPE", "ENTRA_SOURCE", "ENTRA_CLIENT_ID"})
      if (lookup(env, prefix + field)) p.error(prefix + field, "applies only with " + prefix + "AUTH=entra");
  }
  cfg.backends.push_back(std::move(b));
}

// CLIENT_ENTRA_TENANT_ID + CLIENT_ENTRA_AUDIENCE (+ CLIENT_ENTRA_ROLES, CLIENT_ENTRA_NAME,
// CLIENT_ENTRA_DISCOVERY_URL): clients may present that tenant's tokens.
void read_client_token_issuer(const EnvMap& env, Problems& p, Config& cfg) {
  const std::string* tenant = lookup(env, "CLIENT_ENTRA_TENANT_ID");
  if (!tenant) {
    for (const char* var :
         {"CLIENT_ENTRA_AUDIENCE", "CLIENT_ENTRA_ROLES", "CLIENT_ENTRA_NAME", "CLIENT_ENTRA_DISCOVERY_URL"})
      if (lookup(env, var)) p.error(var, "applies only with CLIENT_ENTRA_TENANT_ID");
    return;
  }
  TokenIssuerConfig t;
  t.name = "entra";
  if (!is_tenant_guid(*tenant))
    p.error("CLIENT_ENTRA_TENANT_ID",
            "must be the tenant's id (a GUID, as tokens carry it), got " + quoted(*tenant));
  t.tenant_id = *tenant;
  if (const std::string* v = lookup(env, "CLIENT_ENTRA_AUDIENCE"))
    for (auto a : http::list_tokens(*v)) t.audiences.emplace_back(a);
  if (t.audiences.empty())
    p.error("CLIENT_ENTRA_AUDIENCE",
            "is required with CLIENT_ENTRA_TENANT_ID: the API's application ID URI or client id "
            "(comma-separated)");
  if (const std::string* v = lookup(env, "CLIENT_ENTRA_ROLES"))
    for (auto r : http::list_tokens(*v)) t.required_roles.emplace_back(r);
  if (const std::string* v = lookup(env, "CLIENT_ENTRA_NAME")) {
    if (!is_valid_name(*v))
      p.error("CLIENT_ENTRA_NAME", "must be 1-64 characters of A-Z a-z 0-9 . _ -, got " + quoted(*v));
    else
      t.name = *v;
  }
  if (const std::string* v = lookup(env, "CLIENT_ENTRA_DISCOVERY_URL")) {
    if (auto bad = http_url_problem(*v))
      p.error("CLIENT_ENTRA_DISCOVERY_URL", *bad);
    else
      t.discovery_url = *v;
  }
  if (const std::string* v = lookup(env, "AZURE_AUTHORITY_HOST"); v && !http_url_problem(*v))
    t.authority_host = *v;  // (checked with the backends' Entra settings)
  cfg.client_token_issuers.push_back(std::move(t));
}

// The backend ids of every BACKEND_<X>_<FIELD> variable, so that a typo in a field name or an
// id is reported instead of silently ignored.
std::set<int> backend_ids(const EnvMap& env, Problems& p) {
  const std::vector<std::string_view> fields = backend_fields();
  std::string takes;  // "URL, PRIORITY, ... and ENTRA_CLIENT_ID"
  for (std::size_t i = 0; i < fields.size(); ++i)
    takes += (i == 0 ? "" : i + 1 == fields.size() ? " and " : ", ") + std::string(fields[i]);
  std::set<int> ids;
  for (const auto& [key, value] : env) {
    if (key.rfind("BACKEND_", 0) != 0) continue;
    const std::string_view rest = std::string_view(key).substr(8);
    const auto underscore = rest.find('_');
    if (underscore == std::string_view::npos) continue;
    const std::string_view id_text = rest.substr(0, underscore);
    const std::string_view field = rest.substr(underscore + 1);
    const bool known_field = std::find(fields.begin(), fields.end(), field) != fields.end();
    const auto id = parse_integer<int>(id_text);
    const bool id_ok = id && *id > 0 && id_text.front() != '0';
    if (!id_ok) {
      if (known_field)
        p.error(key,
                "X in BACKEND_X_" + std::string(field) + " must be a positive integer without leading zeros");
      continue;
    }
    if (!known_field) {
      p.error(key, "unknown setting; a backend takes " + takes);
      continue;
    }
    ids.insert(*id);
  }
  return ids;
}

// The listener, threads, timeouts, cooldowns, limits and logs.
void read_process_settings(const EnvMap& env, Problems& p, Config& cfg) {
  if (const std::string* v = lookup(env, "LISTEN_ADDRESS")) {
    if (v->empty())
      p.error("LISTEN_ADDRESS", "is set but empty");
    else
      cfg.listen_address = *v;
  }
  read_int(env, p, "PORT", 0, 65535, cfg.port);
  read_int(env, p, "ADMIN_PORT", 0, 65535, cfg.admin_port);
  if (cfg.admin_port != 0 && cfg.admin_port == cfg.port)
    p.error("ADMIN_PORT", "must differ from PORT (" + std::to_string(cfg.port) + ")");
  read_int(env, p, "THREADS", 0, 256, cfg.threads);
  read_seconds(env, p, "HTTP_TIMEOUT_SECONDS", 1, 86'400, cfg.http_timeout);
  read_seconds(env, p, "HEALTH_PROBE_SECONDS", 0, 3'600, cfg.health_probe_interval);
  read_seconds(env, p, "HEALTH_PROBE_TIMEOUT_SECONDS", 1, 60, cfg.health_probe_timeout);
  if (const std::string* v = lookup(env, "FIRST_TOKEN_TIMEOUT_SECONDS"); v && !v->empty()) {
    std::chrono::milliseconds ms{0};
    read_fractional_seconds(env, p, "FIRST_TOKEN_TIMEOUT_SECONDS", 0, 86'400, ms);
    cfg.first_token_timeout = ms;
  }
  read_seconds(env, p, "CONNECT_TIMEOUT_SECONDS", 1, 600, cfg.connect_timeout);
  read_seconds(env, p, "REQUEST_TIMEOUT_SECONDS", 1, 86'400, cfg.request_timeout);
  {
    long long ms = cfg.capacity_grace.count();
    read_int(env, p, "CAPACITY_GRACE_MS", 0, 60'000, ms);
    cfg.capacity_grace = std::chrono::milliseconds(ms);
  }
  read_seconds(env, p, "CLIENT_IDLE_TIMEOUT_SECONDS", 1, 3'600, cfg.client_idle_timeout);
  read_seconds(env, p, "REALTIME_IDLE_TIMEOUT_SECONDS", 1, 86'400, cfg.realtime_idle_timeout);
  read_seconds(env, p, "REALTIME_MAX_SESSION_SECONDS", 1, 86'400, cfg.realtime_max_session);
  read_seconds(env, p, "SHUTDOWN_TIMEOUT_SECONDS", 0, 3'600, cfg.shutdown_timeout);
  read_fractional_seconds(env, p, "DEFAULT_COOLDOWN_SECONDS", 0.1, 3'600, cfg.default_cooldown);
  read_fractional_seconds(env, p, "MAX_COOLDOWN_SECONDS", 1, 86'400, cfg.max_cooldown);
  read_fractional_seconds(env, p, "QUOTA_WINDOW_SECONDS", 0.1, 3'600, cfg.quota_window);
  if (cfg.default_cooldown > cfg.max_cooldown)
    p.error("DEFAULT_COOLDOWN_SECONDS", "must not exceed MAX_COOLDOWN_SECONDS");
  read_int(env, p, "MAX_REQUEST_BODY_BYTES", 1, 1ll << 32, cfg.max_request_body_bytes);
  read_int(env, p, "STREAM_REQUEST_BODY_BYTES", 1, 1ll << 32, cfg.stream_request_body_bytes);
  read_int(env, p, "MAX_STREAMED_BODY_BYTES", 1, 1ll << 40, cfg.max_streamed_body_bytes);
  read_int(env, p, "MAX_BUFFERED_BODIES_BYTES", 1ll << 20, 1ll << 40, cfg.max_buffered_bodies_bytes);
  if (cfg.max_buffered_bodies_bytes < cfg.max_request_body_bytes)
    p.error("MAX_BUFFERED_BODIES_BYTES",
            "must not be below MAX_REQUEST_BODY_BYTES (" + std::to_string(cfg.max_request_body_bytes) + ")");
  if (cfg.max_streamed_body_bytes < cfg.stream_request_body_bytes)
    p.error("MAX_STREAMED_BODY_BYTES", "must not be below STREAM_REQUEST_BODY_BYTES (" +
                                           std::to_string(cfg.stream_request_body_bytes) + ")");
  read_int(env, p, "STREAM_HOLDBACK_BYTES", 0, 16ll << 20, cfg.stream_holdback_bytes);
  {
    long long ms = cfg.config_watch_interval.count();
    read_int(env, p, "CONFIG_WATCH_INTERVAL_MS", 10, 600'000, ms);
    cfg.config_watch_interval = std::chrono::milliseconds(ms);
  }
  {
    long long ms = cfg.status_sample_interval.count();
    read_int(env, p, "STATUS_SAMPLE_INTERVAL_MS", 100, 600'000, ms);
    cfg.status_sample_interval = std::chrono::milliseconds(ms);
  }
  read_int(env, p, "MAX_HEADER_COUNT", 8, 1000, cfg.max_header_count);
  read_int(env, p, "MAX_CONNECTIONS", 1, 1'000'000, cfg.max_connections);

  if (const std::string* v = lookup(env, "LOG_LEVEL")) {
    static const std::set<std::string> levels = {"trace", "debug",    "info", "warn",
                                                 "error", "critical", "off"};
    if (!levels.count(*v))
      p.error("LOG_LEVEL",
              "must be one of trace, debug, info, warn, error, critical, off; got " + quoted(*v));
    else
      cfg.log_level = *v;
  }
  if (const std::string* v = lookup(env, "LOG_FORMAT")) {
    if (*v != "text" && *v != "json")
      p.error("LOG_FORMAT", "must be text or json, got " + quoted(*v));
    else
      cfg.log_format = *v;
  }
  cfg.access_log = read_bool(env, p, "ACCESS_LOG", true);
  cfg.route_on_remaining = read_bool(env, p, "ROUTE_ON_REMAINING", true);
  cfg.model_catalog = read_bool(env, p, "MODEL_CATALOG", true);
}

// Who may call and what each may spend: client keys, every caller's budget, a tenant's tokens.
void read_client_settings(const EnvMap& env, Problems& p, Config& cfg) {
  if (const std::string* v = lookup(env, "CLIENT_API_KEYS")) {
    for (auto key : http::list_tokens(*v)) {
      if (key.size() < 8)
        p.error("CLIENT_API_KEYS", "each key must be at least 8 characters (value not shown)");
      else
        cfg.client_api_keys.emplace_back(key);
    }
    if (cfg.client_api_keys.empty() && p.errors.empty())
      p.error("CLIENT_API_KEYS", "is set but holds no key");
  }
  // A budget for every client (each its own): the environment's form of subject_limits "*".
  ClientLimits every_client;
  read_int(env, p, "CLIENT_TOKENS_PER_MINUTE", 1, 1'000'000'000'000ll, every_client.tokens_per_minute);
  read_int(env, p, "CLIENT_REQUESTS_PER_MINUTE", 1, 1'000'000'000ll, every_client.requests_per_minute);
  read_int(env, p, "CLIENT_TOKENS_PER_DAY", 1, 1'000'000'000'000'000ll, every_client.tokens_per_day);
  read_int(env, p, "CLIENT_TOKENS_PER_MONTH", 1, 1'000'000'000'000'000ll, every_client.tokens_per_month);
  read_int(env, p, "CLIENT_MAX_IN_FLIGHT", 1, 1'000'000ll, every_client.max_in_flight);
  if (every_client.any()) cfg.policy.subject_limits.push_back(SubjectLimit{"*", false, every_client});
  read_client_token_issuer(env, p, cfg);
}

// The admin port's tokens (docs/operations.md); the file's admin section adds to them.
void read_admin(const EnvMap& env, Problems& p, AdminConfig& admin) {
  if (const std::string* v = lookup(env, "ADMIN_TOKENS")) {
    admin.tokens = parse_admin_tokens(*v, "ADMIN_TOKENS", p.errors);
    for (const auto& conflict : admin_token_conflicts(admin, 0)) p.error("ADMIN_TOKENS", conflict);
  }
  admin.metrics_open = read_bool(env, p, "ADMIN_METRICS_OPEN", false);
}

}  // namespace

ConfigLoadResult load_config_from_env(const EnvMap& env, bool require_backends) {
  Problems p;
  Config cfg;

  const std::set<int> ids = backend_ids(env, p);
  for (int id : ids) load_backend(env, p, id, cfg);
  if (ids.empty() && require_backends)
    p.error("BACKEND_1_URL",
            "no backend is configured; set BACKEND_1_URL (and BACKEND_2_URL, ...), or give a config file "
            "with backends: --config FILE (or CONFIG_FILE)");

  std::set<std::string> names;
  for (const auto& b : cfg.backends)
    if (!names.insert(b.name).second)
      p.error("BACKEND_" + std::to_string(b.id) + "_NAME",
              "duplicates another backend's name " + quoted(b.name));

  read_process_settings(env, p, cfg);
  read_client_settings(env, p, cfg);
  if (const std::string* v = lookup(env, "UPSTREAM_CA_FILE")) {
    if (v->empty() || ::access(v->c_str(), R_OK) != 0)
      p.error("UPSTREAM_CA_FILE", "cannot read the file " + quoted(*v));
    else
      cfg.upstream_ca_file = *v;
  }
  read_redis(env, p, cfg.redis);
  read_admin(env, p, cfg.admin);

  ConfigLoadResult r;
  r.errors = std::move(p.errors);
  r.warnings = std::move(p.warnings);
  if (r.errors.empty()) r.config = std::move(cfg);
  return r;
}

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

}  // namespace smartlb::config
