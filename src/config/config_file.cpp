#include "smartlb/config/config_file.hpp"

#include <openssl/evp.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "smartlb/config/admin_tokens.hpp"
#include "smartlb/config/entra_env.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb {
namespace {

constexpr std::string_view kTopKeys[] = {"name",    "type",         "backends",      "targets",
                                         "clients", "rules",        "model_configs", "subject_limits",
                                         "redis",   "token_issuers", "admin"};
constexpr std::string_view kRedisKeys[] = {"url", "key_prefix", "ca_file", "timeout_ms", "replica_id"};
constexpr std::string_view kAdminKeys[] = {"tokens", "metrics_open"};
constexpr std::string_view kAdminTokenKeys[] = {"name", "role", "token"};
constexpr std::string_view kBackendKeys[] = {
    "name", "url", "api_key",         "auth",  "priority",   "weight",
    "tpm",  "rpm", "deployment_name", "entra", "quota_group"};
constexpr std::string_view kEntraKeys[] = {"source", "scope", "client_id"};
constexpr std::string_view kTargetKeys[] = {"id", "backend", "deployment", "model", "aliases", "quota_group"};
constexpr std::string_view kClientKeys[] = {"name", "key", "key_sha256", "subjects", "limits"};
constexpr std::string_view kClientLimitKeys[] = {"tokens_per_minute", "requests_per_minute", "tokens_per_day",
                                                 "tokens_per_month"};
constexpr std::string_view kSubjectLimitKeys[] = {"subject", "shared", "limits"};
constexpr std::string_view kTokenIssuerKeys[] = {
    "name",           "tenant_id",     "audiences",         "required_roles",
    "authority_host", "discovery_url", "clock_skew_seconds"};
constexpr std::string_view kRuleKeys[] = {
    "id", "type", "when", "load_balance_targets", "config", "affinity", "slow_start_seconds"};
constexpr std::string_view kWhenKeys[] = {"subjects", "models", "metadata"};
constexpr std::string_view kRuleTargetKeys[] = {"target", "weight", "priority", "override_params"};
constexpr std::string_view kLatencyConfigKeys[] = {"lookback_window_minutes",
                                                   "allowed_latency_overhead_percentage"};
constexpr std::string_view kModelConfigKeys[] = {"model", "usage_limits", "failure_tolerance"};
constexpr std::string_view kUsageLimitKeys[] = {"tokens_per_minute", "requests_per_minute"};
constexpr std::string_view kToleranceKeys[] = {"allowed_failures_per_minute", "cooldown_period_minutes"};

// Settings of the environment, which the file does not take: a key spelled like one gets a
// hint instead of "did you mean". Where the file has the same setting, it says where.
struct EnvironmentSetting {
  std::string_view variable, in_the_file;
};
constexpr EnvironmentSetting kEnvironmentSettings[] = {
    {"PORT", ""},
    {"LISTEN_ADDRESS", ""},
    {"ADMIN_PORT", ""},
    {"THREADS", ""},
    {"HTTP_TIMEOUT_SECONDS", ""},
    {"CONNECT_TIMEOUT_SECONDS", ""},
    {"REQUEST_TIMEOUT_SECONDS", ""},
    {"CLIENT_IDLE_TIMEOUT_SECONDS", ""},
    {"SHUTDOWN_TIMEOUT_SECONDS", ""},
    {"DEFAULT_COOLDOWN_SECONDS", ""},
    {"MAX_COOLDOWN_SECONDS", ""},
    {"QUOTA_WINDOW_SECONDS", ""},
    {"MAX_REQUEST_BODY_BYTES", ""},
    {"STREAM_HOLDBACK_BYTES", ""},
    {"MAX_HEADER_COUNT", ""},
    {"MAX_CONNECTIONS", ""},
    {"CONFIG_FILE", ""},
    {"CONFIG_WATCH_INTERVAL_MS", ""},
    {"STATUS_SAMPLE_INTERVAL_MS", ""},
    {"LOG_LEVEL", ""},
    {"LOG_FORMAT", ""},
    {"ACCESS_LOG", ""},
    {"UPSTREAM_CA_FILE", ""},
    {"CLIENT_API_KEYS", "clients (with key or key_sha256)"},
    {"CLIENT_TOKENS_PER_MINUTE", "subject_limits (subject \"*\")"},
    {"CLIENT_REQUESTS_PER_MINUTE", "subject_limits (subject \"*\")"},
    {"CLIENT_TOKENS_PER_DAY", "subject_limits (subject \"*\")"},
    {"CLIENT_TOKENS_PER_MONTH", "subject_limits (subject \"*\")"},
    {"CLIENT_ENTRA_TENANT_ID", "token_issuers"},
    {"CLIENT_ENTRA_AUDIENCE", "token_issuers"},
    {"CLIENT_ENTRA_ROLES", "token_issuers"},
    {"CLIENT_ENTRA_NAME", "token_issuers"},
    {"CLIENT_ENTRA_DISCOVERY_URL", "token_issuers"},
    {"REDIS_URL", "redis.url"},
    {"REDIS_KEY_PREFIX", "redis.key_prefix"},
    {"REDIS_CA_FILE", "redis.ca_file"},
    {"REDIS_TIMEOUT_MS", "redis.timeout_ms"},
    {"REPLICA_ID", "redis.replica_id"},
    {"ADMIN_TOKENS", "admin.tokens"},
    {"ADMIN_METRICS_OPEN", "admin.metrics_open"},
};

// "PORT is an environment variable: ..." for a key spelled like one (port, Port, log-level), or "".
std::string environment_hint(std::string_view key) {
  std::string name(key);
  for (char& c : name) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& s : kEnvironmentSettings) {
    if (s.variable != name) continue;
    std::string hint = std::string(s.variable) + " is an environment variable";
    if (s.in_the_file.empty()) return hint + ": process settings come from the environment, not the file";
    return hint + "; the file's equivalent is " + std::string(s.in_the_file);
  }
  return {};
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string key_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// Walks the parsed document, collecting every problem with its path (and line).
class Reader {
 public:
  Reader(const EnvMap& env, std::string file) : env_(env), file_(std::move(file)) {}

  std::vector<std::string> errors, warnings;

  const std::string& file() const { return file_; }

  void error(const std::string& path, const YAML::Node& at, const std::string& what) {
    errors.push_back(path + ": " + what + where(at));
  }
  void warn(const std::string& path, const YAML::Node& at, const std::string& what) {
    warnings.push_back(path + ": " + what + where(at));
  }

  // Unknown keys are errors, with the closest known key as a hint.
  template <std::size_t N>
  void check_keys(const std::string& path, const YAML::Node& map, const std::string_view (&known)[N]) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(std::begin(known), std::end(known), key) != std::end(known)) continue;
      std::string msg = "unknown key";
      if (const std::string env = environment_hint(key); !env.empty())
        msg += " (" + env + ")";
      else if (const std::string hint = closest(key, known); !hint.empty())
        msg += " (did you mean \"" + hint + "\"?)";
      error(key_path(path, key), kv.first, msg);
    }
  }

  bool is_map(const std::string& path, const YAML::Node& n) {
    if (n.IsMap()) return true;
    error(path, n, "must be a mapping (key: value)");
    return false;
  }
  // A list (a missing or null one is empty).
  bool is_list(const std::string& path, const YAML::Node& n) {
    if (!n || n.IsNull() || n.IsSequence()) return true;
    error(path, n, "must be a list");
    return false;
  }

  // A scalar as a string, with ${NAME} replaced by the environment's value ($${ for a literal ${).
  std::optional<std::string> string(const std::string& path, const YAML::Node& n) {
    if (!n.IsScalar()) {
      error(path, n, "must be a string");
      return std::nullopt;
    }
    return expand(path, n, n.Scalar());
  }
  std::optional<std::string> expand(const std::string& path, const YAML::Node& at, const std::string& raw) {
    std::string out;
    for (std::size_t i = 0; i < raw.size();) {
      if (raw.compare(i, 3, "$${") == 0) {
        out += "${";
        i += 3;
        continue;
      }
      if (raw.compare(i, 2, "${") != 0) {
        out += raw[i++];
        continue;
      }
      const std::size_t close = raw.find('}', i + 2);
      if (close == std::string::npos) {
        error(path, at, "has \"${\" without a closing \"}\" (write $${ for a literal ${)");
        return std::nullopt;
      }
      const std::string name = raw.substr(i + 2, close - i - 2);
      auto it = env_.find(name);
      if (it == env_.end()) {
        error(path, at, "refers to the environment variable " + name + ", which is not set");
        return std::nullopt;
      }
      out += it->second;
      i = close + 1;
    }
    return out;
  }

  // A name (backend, client, quota group): 1-64 characters of A-Z a-z 0-9 . _ -.
  std::optional<std::string> name(const std::string& path, const YAML::Node& n) {
    auto s = string(path, n);
    if (s && !is_valid_name(*s)) {
      error(path, n, "must be 1-64 characters of A-Z a-z 0-9 . _ -, got " + smartlb::quoted(*s));
      return std::nullopt;
    }
    return s;
  }
  std::optional<long long> integer(const std::string& path, const YAML::Node& n, long long lo, long long hi,
                                   const std::string& what) {
    long long v = 0;
    const std::string s = n.IsScalar() ? n.Scalar() : std::string();
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!n.IsScalar() || s.empty() || ec != std::errc{} || p != s.data() + s.size() || v < lo || v > hi) {
      error(path, n,
            "must be " + what + ", got " + (n.IsScalar() ? smartlb::quoted(s) : std::string("a non-scalar")));
      return std::nullopt;
    }
    return v;
  }
  std::optional<double> number(const std::string& path, const YAML::Node& n, double lo, double hi,
                               const std::string& what) {
    double v = 0;
    const std::string s = n.IsScalar() ? n.Scalar() : std::string();
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!n.IsScalar() || s.empty() || ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v) ||
        v < lo || v > hi) {
      error(path, n,
            "must be " + what + ", got " + (n.IsScalar() ? smartlb::quoted(s) : std::string("a non-scalar")));
      return std::nullopt;
    }
    return v;
  }
  std::optional<bool> boolean(const std::string& path, const YAML::Node& n) {
    const std::string s = n.IsScalar() ? n.Scalar() : std::string();
    if (s == "true") return true;
    if (s == "false") return false;
    error(path, n, "must be true or false");
    return std::nullopt;
  }
  std::vector<std::string> strings(const std::string& path, const YAML::Node& n) {
    std::vector<std::string> out;
    if (!is_list(path, n) || !n) return out;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (auto s = string(index_path(path, i), n[i])) {
        if (s->empty())
          error(index_path(path, i), n[i], "must not be empty");
        else
          out.push_back(std::move(*s));
      }
    return out;
  }

  // A YAML value as JSON: quoted scalars are strings, plain ones are typed as YAML 1.2 would.
  std::optional<nlohmann::json> json(const std::string& path, const YAML::Node& n) {
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nlohmann::json(nullptr);
      case YAML::NodeType::Sequence: {
        nlohmann::json a = nlohmann::json::array();
        for (std::size_t i = 0; i < n.size(); ++i) {
          auto v = json(index_path(path, i), n[i]);
          if (!v) return std::nullopt;
          a.push_back(std::move(*v));
        }
        return a;
      }
      case YAML::NodeType::Map: {
        nlohmann::json o = nlohmann::json::object();
        for (const auto& kv : n) {
          auto v = json(key_path(path, kv.first.Scalar()), kv.second);
          if (!v) return std::nullopt;
          o[kv.first.Scalar()] = std::move(*v);
        }
        return o;
      }
      case YAML::NodeType::Scalar:
        break;
    }
    const std::string& s = n.Scalar();
    if (n.Tag() != "!") {  // plain (unquoted)
      if (s == "null" || s == "~" || s.empty()) return nlohmann::json(nullptr);
      if (s == "true") return nlohmann::json(true);
      if (s == "false") return nlohmann::json(false);
      long long i = 0;
      if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
          ec == std::errc{} && p == s.data() + s.size())
        return nlohmann::json(i);
      double d = 0;
      if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
          ec == std::errc{} && p == s.data() + s.size() && std::isfinite(d))
        return nlohmann::json(d);
    }
    auto expanded = expand(path, n, s);
    if (!expanded) return std::nullopt;
    return nlohmann::json(*expanded);
  }

 private:
  std::string where(const YAML::Node& n) const {
    if (!n.IsDefined()) return {};
    const YAML::Mark m = n.Mark();
    if (m.line < 0) return {};
    return " (" + file_ + ":" + std::to_string(m.line + 1) + ")";
  }

  const EnvMap& env_;
  std::string file_;
};

// Where the copies of a key are: "4 and 7", "4, 7 and 9"; line:column when two share a line
// (JSON on one line).
std::string join_places(const std::vector<YAML::Mark>& at) {
  std::set<int> lines;
  for (const auto& m : at) lines.insert(m.line);
  std::string out;
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (i > 0) out += i + 1 == at.size() ? " and " : ", ";
    out += std::to_string(at[i].line + 1);
    if (lines.size() < at.size()) out += ":" + std::to_string(at[i].column + 1);
  }
  return out;
}

// A key given twice in one mapping. yaml-cpp keeps both and `node[key]` finds the first, so an
// edit appended lower in the file would be ignored without a word: an error naming both lines.
// Every mapping is looked at once: an alias shares its anchor's node and mark, so `walked`
// (the marks of the collections seen) also keeps nested aliases from being walked again and again.
void check_duplicate_keys(Reader& r, const std::string& path, const YAML::Node& n, std::set<int>& walked) {
  if (!n.IsMap() && !n.IsSequence()) return;
  if (!walked.insert(n.Mark().pos).second) return;
  if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : n) check_duplicate_keys(r, index_path(path, i++), item, walked);
    return;
  }
  std::vector<std::pair<std::string, std::vector<YAML::Mark>>> keys;  // in the order they first appear
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
    if (it == keys.end()) it = keys.insert(keys.end(), {key, {}});
    it->second.push_back(kv.first.Mark());
    check_duplicate_keys(r, key_path(path, key), kv.second, walked);
  }
  for (const auto& [key, at] : keys)
    if (at.size() > 1)
      r.errors.push_back((path.empty() ? std::string() : path + ": ") + smartlb::quoted(key) + " is given " +
                         (at.size() == 2 ? std::string("twice") : std::to_string(at.size()) + " times") +
                         (path.empty() ? " at the top" : "") + " (lines " + join_places(at) + " of " +
                         r.file() + ")");
}

AuthStyle parse_auth(Reader& r, const std::string& path, const YAML::Node& n, bool& ok) {
  const auto s = r.string(path, n);
  ok = true;
  if (s == "auto") return AuthStyle::Auto;
  if (s == "api-key") return AuthStyle::ApiKey;
  if (s == "bearer") return AuthStyle::Bearer;
  if (s == "entra") return AuthStyle::Entra;
  if (s) r.error(path, n, "must be auto, api-key, bearer or entra, got " + smartlb::quoted(*s));
  ok = false;
  return AuthStyle::Auto;
}

// `auth: entra` and its `entra:` block, resolved with the process-wide Azure variables as
// BACKEND_X_ENTRA_* are (config/entra_env.hpp).
void read_entra(Reader& r, const EnvMap& env, const std::string& path, const YAML::Node& n,
                BackendConfig& b) {
  const auto block = n["entra"];
  if (b.auth != AuthStyle::Entra) {
    if (block) r.error(key_path(path, "entra"), block, "applies only with auth: entra");
    return;
  }
  b.key_setting = "the role assignment of its Entra ID identity (Cognitive Services OpenAI User)";
  if (n["api_key"]) r.error(key_path(path, "api_key"), n["api_key"], "must not be set with auth: entra");
  std::optional<std::string> source, scope, client_id;
  const std::string epath = key_path(path, "entra");
  if (block && !block.IsNull() && r.is_map(epath, block)) {
    r.check_keys(epath, block, kEntraKeys);
    if (const auto v = block["source"]) source = r.string(key_path(epath, "source"), v);
    if (const auto v = block["scope"]) scope = r.string(key_path(epath, "scope"), v);
    if (const auto v = block["client_id"]) client_id = r.string(key_path(epath, "client_id"), v);
  }
  EntraBackendSettings settings;
  settings.source = source ? &*source : nullptr;
  settings.scope = scope ? &*scope : nullptr;
  settings.client_id = client_id ? &*client_id : nullptr;
  settings.source_name = key_path(epath, "source");
  settings.scope_name = key_path(epath, "scope");
  settings.client_id_name = key_path(epath, "client_id");
  for (auto& e : resolve_entra_credential(env, settings, b.entra)) r.errors.push_back(std::move(e));
}

// `azure_clients`: whether any request may reach these backends (a file without rules makes
// them the default rule), Azure-style ones included; else only through the rules' targets.
void read_backends(Reader& r, const EnvMap& env, const YAML::Node& list, bool azure_clients, Config& cfg) {
  if (!r.is_list("backends", list) || !list) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("backends", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kBackendKeys);
    BackendConfig b;
    b.key_setting = key_path(path, "api_key");
    if (const auto name = n["name"]; !name) {
      r.error(key_path(path, "name"), n, "is required");
    } else if (auto s = r.name(key_path(path, "name"), name)) {
      b.name = *s;
    }
    if (const auto url = n["url"]; !url) {
      r.error(key_path(path, "url"), n, "is required");
    } else if (auto s = r.string(key_path(path, "url"), url)) {
      auto parsed = parse_backend_url(*s);
      if (!parsed.url) {
        r.error(key_path(path, "url"), url, parsed.error + ", got " + smartlb::quoted(*s));
      } else {
        b.url = std::move(*parsed.url);
        b.azure_host = is_azure_host(b.url.host);
        if (auto w = doubled_prefix_warning(b.url, key_path(path, "url"), azure_clients))
          r.warn(key_path(path, "url"), url, *w);
      }
    }
    if (const auto key = n["api_key"]) {
      if (auto s = r.string(key_path(path, "api_key"), key)) {
        if (const auto problem = api_key_problem(*s))
          r.error(key_path(path, "api_key"), key, *problem);
        else
          b.api_key = *s;
      }
    }
    if (const auto auth = n["auth"]) {
      bool ok = false;
      b.auth = parse_auth(r, key_path(path, "auth"), auth, ok);
    }
    read_entra(r, env, path, n, b);
    if (const auto v = n["quota_group"])
      if (auto g = r.name(key_path(path, "quota_group"), v)) b.quota_group = *g;
    if (const auto v = n["priority"])
      if (auto x = r.integer(key_path(path, "priority"), v, -1'000'000, 1'000'000, "an integer"))
        b.priority = static_cast<int>(*x);
    if (const auto v = n["weight"])
      if (auto x = r.integer(key_path(path, "weight"), v, 1, 1'000'000, "a positive integer"))
        b.weight = static_cast<std::uint32_t>(*x);
    if (const auto v = n["tpm"])
      if (auto x = r.integer(key_path(path, "tpm"), v, 1, 1'000'000'000'000ll, "a positive integer"))
        b.tpm = *x;
    if (const auto v = n["rpm"])
      if (auto x = r.integer(key_path(path, "rpm"), v, 1, 1'000'000'000ll, "a positive integer")) b.rpm = *x;
    if (const auto v = n["deployment_name"])
      if (auto s = r.string(key_path(path, "deployment_name"), v)) {
        if (!is_valid_deployment_name(*s))
          r.error(key_path(path, "deployment_name"), v,
                  "must be 1-128 characters of A-Z a-z 0-9 . _ - ~, got " + smartlb::quoted(*s));
        else
          b.deployment_name = *s;
      }
    if (b.name.empty()) continue;
    const auto clash = std::find_if(cfg.backends.begin(), cfg.backends.end(),
                                    [&](const BackendConfig& o) { return o.name == b.name; });
    if (clash != cfg.backends.end()) {
      r.error(key_path(path, "name"), n["name"],
              "duplicates the backend " + smartlb::quoted(b.name) +
                  (clash->id > 0 ? " of BACKEND_" + std::to_string(clash->id) + "_*" : std::string()));
      continue;
    }
    cfg.backends.push_back(std::move(b));
  }
}

void read_targets(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("targets", list) || !list) return;
  std::vector<std::string> backend_names;
  for (const auto& b : cfg.backends) backend_names.push_back(b.name);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("targets", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kTargetKeys);
    TargetConfig t;
    bool ok = true;
    if (const auto id = n["id"]; !id) {
      r.error(key_path(path, "id"), n, "is required");
      ok = false;
    } else if (auto s = r.string(key_path(path, "id"), id)) {
      if (s->empty() || s->size() > 200 ||
          std::any_of(s->begin(), s->end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; })) {
        r.error(key_path(path, "id"), id,
                "must be 1-200 characters without spaces, got " + smartlb::quoted(*s));
        ok = false;
      } else if (std::any_of(cfg.policy.targets.begin(), cfg.policy.targets.end(),
                             [&](const TargetConfig& o) { return o.id == *s; })) {
        r.error(key_path(path, "id"), id, "duplicates another target's id " + smartlb::quoted(*s));
        ok = false;
      } else {
        t.id = *s;
      }
    } else {
      ok = false;
    }
    // A target whose backend is wrong is still kept (the configuration is refused anyway), so
    // that the rules naming it are not reported too.
    if (const auto b = n["backend"]; !b) {
      r.error(key_path(path, "backend"), n, "is required");
    } else if (auto s = r.string(key_path(path, "backend"), b)) {
      if (std::find(backend_names.begin(), backend_names.end(), *s) == backend_names.end()) {
        std::string msg = "no backend is named " + smartlb::quoted(*s);
        if (const auto hint = closest(*s, backend_names); !hint.empty())
          msg += " (did you mean \"" + hint + "\"?)";
        r.error(key_path(path, "backend"), b, msg);
      } else {
        t.backend = *s;
      }
    }
    const auto dep = n["deployment"], model = n["model"];
    if (dep && model) r.error(path, n, "takes deployment (Azure) or model (OpenAI-style), not both");
    for (const auto& [key, node] : {std::pair{"deployment", dep}, std::pair{"model", model}}) {
      if (!node) continue;
      if (auto s = r.string(key_path(path, key), node)) {
        if (!is_valid_deployment_name(*s))
          r.error(key_path(path, key), node,
                  "must be 1-128 characters of A-Z a-z 0-9 . _ - ~, got " + smartlb::quoted(*s));
        else
          t.upstream_name = *s;
      }
    }
    t.aliases = r.strings(key_path(path, "aliases"), n["aliases"]);
    if (const auto v = n["quota_group"])
      if (auto g = r.name(key_path(path, "quota_group"), v)) t.quota_group = *g;
    if (ok) cfg.policy.targets.push_back(std::move(t));
  }
}

// A budget (`limits` of a client or a subject): at least one limit, each a positive integer.
ClientLimits read_limits(Reader& r, const std::string& path, const YAML::Node& n) {
  ClientLimits l;
  if (!r.is_map(path, n)) return l;
  r.check_keys(path, n, kClientLimitKeys);
  const auto read = [&](std::string_view key, long long hi, std::int64_t& out) {
    if (const auto v = n[std::string(key)])
      if (auto x = r.integer(key_path(path, key), v, 1, hi, "a positive integer")) out = *x;
  };
  read("tokens_per_minute", 1'000'000'000'000ll, l.tokens_per_minute);
  read("requests_per_minute", 1'000'000'000ll, l.requests_per_minute);
  read("tokens_per_day", 1'000'000'000'000'000ll, l.tokens_per_day);
  read("tokens_per_month", 1'000'000'000'000'000ll, l.tokens_per_month);
  if (!l.any() && n.size() == 0)
    r.error(path, n,
            "needs at least one of tokens_per_minute, requests_per_minute, tokens_per_day, tokens_per_month");
  return l;
}

void read_subject_limits(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("subject_limits", list) || !list) return;
  std::set<std::pair<std::string, bool>> seen;
  for (const auto& s : cfg.policy.subject_limits) seen.emplace(s.subject, s.shared);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("subject_limits", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kSubjectLimitKeys);
    SubjectLimit s;
    bool ok = true;
    if (const auto v = n["subject"]; !v) {
      r.error(key_path(path, "subject"), n,
              "is required (a subject such as team:search, or * for every caller)");
      ok = false;
    } else if (auto x = r.string(key_path(path, "subject"), v); x && !x->empty()) {
      s.subject = *x;
    } else {
      if (x) r.error(key_path(path, "subject"), v, "must not be empty");
      ok = false;
    }
    if (const auto v = n["shared"]) {
      if (auto b = r.boolean(key_path(path, "shared"), v))
        s.shared = *b;
      else
        ok = false;
    }
    if (const auto v = n["limits"]; !v) {
      r.error(key_path(path, "limits"), n, "is required");
      ok = false;
    } else {
      const std::size_t before = r.errors.size();
      s.limits = read_limits(r, key_path(path, "limits"), v);
      ok = ok && r.errors.size() == before;
    }
    if (ok && s.subject == "*" && s.shared) {
      r.error(key_path(path, "shared"), n["shared"],
              "cannot be true for subject \"*\" (one budget for every caller is a quota on the backends: "
              "declare it with usage_limits or BACKEND_X_TPM)");
      ok = false;
    }
    if (ok && !seen.emplace(s.subject, s.shared).second) {
      r.error(key_path(path, "subject"), n["subject"],
              "a budget for " + smartlb::quoted(s.subject) + (s.shared ? " (shared)" : "") +
                  " is already declared" +
                  (s.subject == "*" ? " (CLIENT_TOKENS_PER_MINUTE & co. declare \"*\")" : ""));
      ok = false;
    }
    if (ok) cfg.policy.subject_limits.push_back(std::move(s));
  }
}

// The file's `redis:` section: the same settings as REDIS_URL and its variables, which it
// overrides (docs/scale-out.md). The URL's password never appears in a message.
void read_redis(Reader& r, const YAML::Node& n, Config& cfg) {
  if (!n || n.IsNull() || !r.is_map("redis", n)) return;
  r.check_keys("redis", n, kRedisKeys);
  RedisConfig& redis = cfg.redis;
  if (const auto v = n["url"])
    if (auto s = r.string("redis.url", v)) {
      auto parsed = parse_redis_url(*s);
      if (parsed.url)
        redis.url = std::move(parsed.url);
      else
        r.error("redis.url", v, parsed.error.substr(std::string_view("REDIS_URL ").size()));
    }
  if (const auto v = n["key_prefix"])
    if (auto s = r.string("redis.key_prefix", v)) redis.key_prefix = *s;
  if (const auto v = n["ca_file"])
    if (auto s = r.string("redis.ca_file", v)) {
      if (s->empty() || ::access(s->c_str(), R_OK) != 0)
        r.error("redis.ca_file", v, "cannot read the file " + smartlb::quoted(*s));
      else
        redis.ca_file = *s;
    }
  if (const auto v = n["timeout_ms"])
    if (auto x = r.integer("redis.timeout_ms", v, 10, 60'000, "an integer from 10 to 60000"))
      redis.timeout = std::chrono::milliseconds(*x);
  if (const auto v = n["replica_id"])
    if (auto s = r.string("redis.replica_id", v)) {
      if (s->empty() || s->size() > 200)
        r.error("redis.replica_id", v, "must be 1 to 200 characters");
      else
        redis.replica_id = *s;
    }
}

// The file's `admin:` section (docs/operations.md): tokens added to ADMIN_TOKENS' (a name,
// a role, the token, usually a ${NAME} reference), and metrics_open over ADMIN_METRICS_OPEN.
void read_admin(Reader& r, const YAML::Node& n, Config& cfg) {
  if (!n || n.IsNull() || !r.is_map("admin", n)) return;
  r.check_keys("admin", n, kAdminKeys);
  if (const auto v = n["metrics_open"])
    if (auto b = r.boolean("admin.metrics_open", v)) cfg.admin.metrics_open = *b;
  const YAML::Node list = n["tokens"];
  if (!r.is_list("admin.tokens", list) || !list) return;
  const std::size_t from = cfg.admin.tokens.size();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("admin.tokens", i);
    const YAML::Node e = list[i];
    if (!r.is_map(path, e)) continue;
    r.check_keys(path, e, kAdminTokenKeys);
    AdminToken t;
    bool ok = true;
    if (const auto v = e["name"]) {
      if (auto name = r.name(key_path(path, "name"), v))
        t.name = *name;
      else
        ok = false;
    } else {
      r.error(path, e, "needs a name (shown in the log of what it changed)");
      ok = false;
    }
    if (const auto v = e["role"]) {
      const auto role = v.IsScalar() ? admin_role_named(v.Scalar()) : std::nullopt;
      if (role)
        t.role = *role;
      else {
        r.error(key_path(path, "role"), v, "must be read or write");
        ok = false;
      }
    } else {
      r.error(path, e, "needs a role: read or write");
      ok = false;
    }
    if (const auto v = e["token"]) {
      if (auto token = r.string(key_path(path, "token"), v)) {
        if (const auto problem = admin_token_problem(*token)) {
          r.error(key_path(path, "token"), v, *problem);
          ok = false;
        } else {
          t.token = std::move(*token);
        }
      } else {
        ok = false;
      }
    } else {
      r.error(path, e, "needs a token (e.g. ${ADMIN_TOKEN})");
      ok = false;
    }
    if (ok) cfg.admin.tokens.push_back(std::move(t));
  }
  std::vector<std::string> duplicates;
  check_admin_tokens(cfg.admin, from, duplicates);
  for (const auto& d : duplicates) r.error("admin.tokens", list, d.substr(std::string_view("admin tokens: ").size()));
}

void read_clients(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("clients", list) || !list) return;
  std::set<std::string> names;
  for (std::size_t i = 0; i < cfg.client_api_keys.size(); ++i)
    names.insert("client-" + std::to_string(i + 1));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("clients", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kClientKeys);
    ClientConfig c;
    bool ok = true;
    if (const auto name = n["name"]; !name) {
      r.error(key_path(path, "name"), n, "is required");
      ok = false;
    } else if (auto s = r.name(key_path(path, "name"), name)) {
      if (!names.insert(*s).second) {
        r.error(key_path(path, "name"), name,
                "duplicates another client's name " + smartlb::quoted(*s) +
                    (s->rfind("client-", 0) == 0 ? " (CLIENT_API_KEYS names its keys client-1, client-2, ...)"
                                                 : ""));
        ok = false;
      } else {
        c.name = *s;
      }
    } else {
      ok = false;
    }
    const auto key = n["key"], hash = n["key_sha256"];
    if (!key && !hash) {
      r.error(path, n, "needs key (e.g. ${CLIENT_KEY}) or key_sha256");
      ok = false;
    } else if (key && hash) {
      r.error(path, n, "takes key or key_sha256, not both");
      ok = false;
    } else if (key) {
      if (auto s = r.string(key_path(path, "key"), key)) {
        if (s->size() < 8) {
          r.error(key_path(path, "key"), key, "must be at least 8 characters (value not shown)");
          ok = false;
        } else {
          c.key = *s;
        }
      } else {
        ok = false;
      }
    } else if (auto s = r.string(key_path(path, "key_sha256"), hash)) {
      std::string h = *s;
      if (h.rfind("sha256:", 0) == 0) h = h.substr(7);
      std::transform(h.begin(), h.end(), h.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (h.size() != 64 || !std::all_of(h.begin(), h.end(), [](char ch) { return std::isxdigit(ch); })) {
        r.error(key_path(path, "key_sha256"), hash, "must be 64 hex digits (the SHA-256 of the key)");
        ok = false;
      } else {
        c.key_sha256 = h;
      }
    } else {
      ok = false;
    }
    c.subjects = r.strings(key_path(path, "subjects"), n["subjects"]);
    if (const auto l = n["limits"]; l && !l.IsNull()) {
      const std::size_t before = r.errors.size();
      c.limits = read_limits(r, key_path(path, "limits"), l);
      ok = ok && r.errors.size() == before;
    }
    if (ok) cfg.policy.clients.push_back(std::move(c));
  }
}

// Entra ID tenants whose tokens clients may present. Their names are client names: unique
// among the clients' and CLIENT_ENTRA_NAME's.
void read_token_issuers(Reader& r, const EnvMap& env, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("token_issuers", list) || !list) return;
  std::set<std::string> names;
  for (std::size_t i = 0; i < cfg.client_api_keys.size(); ++i)
    names.insert("client-" + std::to_string(i + 1));
  for (const auto& c : cfg.policy.clients) names.insert(c.name);
  for (const auto& t : cfg.client_token_issuers) names.insert(t.name);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("token_issuers", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kTokenIssuerKeys);
    TokenIssuerConfig t;
    bool ok = true;
    if (const auto name = n["name"]; !name) {
      r.error(key_path(path, "name"), n, "is required (the client name of its callers in logs and metrics)");
      ok = false;
    } else if (auto s = r.name(key_path(path, "name"), name)) {
      if (!names.insert(*s).second) {
        r.error(key_path(path, "name"), name,
                "duplicates another client's or token issuer's name " + smartlb::quoted(*s));
        ok = false;
      }
      t.name = *s;
    } else {
      ok = false;
    }
    if (const auto tenant = n["tenant_id"]; !tenant) {
      r.error(key_path(path, "tenant_id"), n, "is required (the tenant's id, a GUID)");
      ok = false;
    } else if (auto s = r.string(key_path(path, "tenant_id"), tenant)) {
      if (!is_tenant_guid(*s)) {
        r.error(key_path(path, "tenant_id"), tenant,
                "must be the tenant's id, a GUID (tokens carry it in iss), got " + smartlb::quoted(*s));
        ok = false;
      }
      t.tenant_id = *s;
    } else {
      ok = false;
    }
    t.audiences = r.strings(key_path(path, "audiences"), n["audiences"]);
    if (t.audiences.empty()) {
      r.error(
          key_path(path, "audiences"), n,
          "needs at least one audience (the API's application ID URI, e.g. api://smartlb, or its client id)");
      ok = false;
    }
    t.required_roles = r.strings(key_path(path, "required_roles"), n["required_roles"]);
    for (const char* key : {"authority_host", "discovery_url"}) {
      const auto v = n[key];
      if (!v) continue;
      if (auto s = r.string(key_path(path, key), v)) {
        if (auto bad = http_url_problem(*s)) {
          r.error(key_path(path, key), v, *bad);
          ok = false;
        }
        (std::string_view(key) == "authority_host" ? t.authority_host : t.discovery_url) = *s;
      } else {
        ok = false;
      }
    }
    if (t.authority_host.empty())
      if (auto it = env.find("AZURE_AUTHORITY_HOST"); it != env.end() && !http_url_problem(it->second))
        t.authority_host = it->second;
    if (const auto v = n["clock_skew_seconds"]) {
      if (auto s = r.integer(key_path(path, "clock_skew_seconds"), v, 0, 600, "an integer from 0 to 600"))
        t.clock_skew = std::chrono::seconds(*s);
      else
        ok = false;
    }
    if (ok) cfg.policy.token_issuers.push_back(std::move(t));
  }
}

const TargetConfig* find_target(const Config& cfg, std::string_view id) {
  for (const auto& t : cfg.policy.targets)
    if (t.id == id) return &t;
  return nullptr;
}

void read_rule_target(Reader& r, const std::string& path, const YAML::Node& n, const Config& cfg,
                      RuleConfig& rule) {
  if (!r.is_map(path, n)) return;
  r.check_keys(path, n, kRuleTargetKeys);
  RuleTarget rt;
  const TargetConfig* target = nullptr;
  if (const auto t = n["target"]; !t) {
    r.error(key_path(path, "target"), n, "is required");
  } else if (auto s = r.string(key_path(path, "target"), t)) {
    target = find_target(cfg, *s);
    if (!target) {
      std::vector<std::string> ids;
      for (const auto& x : cfg.policy.targets) ids.push_back(x.id);
      std::string msg = "no target has the id " + smartlb::quoted(*s);
      if (const auto hint = closest(*s, ids); !hint.empty()) msg += " (did you mean \"" + hint + "\"?)";
      r.error(key_path(path, "target"), t, msg);
    } else if (std::any_of(rule.targets.begin(), rule.targets.end(),
                           [&](const RuleTarget& o) { return o.target == *s; })) {
      r.error(key_path(path, "target"), t, "is listed twice in this rule");
      target = nullptr;
    }
    rt.target = *s;
  }
  // A target's weight and priority default to its backend's.
  for (const auto& b : cfg.backends)
    if (target && b.name == target->backend) {
      rt.weight = b.weight;
      rt.priority = b.priority;
    }
  if (const auto w = n["weight"]) {
    if (rule.type == RuleType::Latency)
      r.warn(key_path(path, "weight"), w, "has no effect in a latency-based-routing rule");
    if (auto x = r.integer(key_path(path, "weight"), w, 1, 1'000'000, "a positive integer"))
      rt.weight = static_cast<std::uint32_t>(*x);
  }
  if (const auto p = n["priority"]) {
    if (rule.type != RuleType::Priority)
      r.warn(key_path(path, "priority"), p, "has effect only in a priority-based-routing rule");
    if (auto x = r.integer(key_path(path, "priority"), p, -1'000'000, 1'000'000, "an integer"))
      rt.priority = static_cast<int>(*x);
  }
  if (const auto o = n["override_params"]; o && !o.IsNull()) {
    const std::string opath = key_path(path, "override_params");
    if (r.is_map(opath, o)) {
      for (const auto& kv : o) {
        const std::string key = kv.first.Scalar();
        auto value = r.json(key_path(opath, key), kv.second);
        if (!value) continue;
        if (value->is_null()) {
          rt.override_params.emplace_back(key, std::nullopt);
          continue;
        }
        try {
          rt.override_params.emplace_back(key, value->dump());
        } catch (const nlohmann::json::exception&) {  // a string that is not UTF-8
          r.error(key_path(opath, key), kv.second, "must be valid UTF-8 text");
        }
      }
    }
  }
  if (target) rule.targets.push_back(std::move(rt));
}

// A rule's `when.models` are the names clients ask for; its targets answer them, each under its
// own deployment or model name (TrueFoundry's virtual models: "bedrock/llama3" served by
// "azure/bedrock-llama3" and "aws/bedrock-llama3"). A target with no such name passes the
// client's on: worth a warning when it does not serve that name, since its backend then gets a
// name it probably does not know.
void warn_unnamed_targets(Reader& r, const std::string& path, const YAML::Node& list, const RuleConfig& rule,
                          const Config& cfg) {
  for (std::size_t k = 0; k < rule.models.size(); ++k)
    for (const RuleTarget& rt : rule.targets) {
      const TargetConfig* t = find_target(cfg, rt.target);
      if (!t || !t->upstream_name.empty() || t->serves(rule.models[k])) continue;
      r.warn(index_path(path, k), list[k],
             "the target " + smartlb::quoted(t->id) + " neither serves " + smartlb::quoted(rule.models[k]) +
                 " nor has a deployment or model to be called with, so its backend is asked for " +
                 smartlb::quoted(rule.models[k]) +
                 " (give the target a deployment or model; an alias if its backend knows that name)");
    }
}

void read_rules(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("rules", list) || !list) return;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("rules", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kRuleKeys);
    RuleConfig rule;
    if (const auto id = n["id"]; !id) {
      r.error(key_path(path, "id"), n, "is required");
    } else if (auto s = r.string(key_path(path, "id"), id)) {
      if (s->empty())
        r.error(key_path(path, "id"), id, "must not be empty");
      else if (!ids.insert(*s).second)
        r.error(key_path(path, "id"), id, "duplicates another rule's id " + smartlb::quoted(*s));
      rule.id = *s;
    }
    if (const auto type = n["type"]; !type) {
      r.error(key_path(path, "type"), n,
              "is required: weight-based-routing, latency-based-routing or priority-based-routing");
    } else if (auto s = r.string(key_path(path, "type"), type)) {
      if (*s == "weight-based-routing")
        rule.type = RuleType::Weight;
      else if (*s == "latency-based-routing")
        rule.type = RuleType::Latency;
      else if (*s == "priority-based-routing")
        rule.type = RuleType::Priority;
      else {
        static constexpr std::string_view kTypes[] = {"weight-based-routing", "latency-based-routing",
                                                      "priority-based-routing"};
        std::string msg =
            "must be weight-based-routing, latency-based-routing or priority-based-routing, got " +
            smartlb::quoted(*s);
        if (const auto hint = closest(*s, kTypes); !hint.empty()) msg += " (did you mean \"" + hint + "\"?)";
        r.error(key_path(path, "type"), type, msg);
      }
    }
    const auto targets = n["load_balance_targets"];
    const std::string tpath = key_path(path, "load_balance_targets");
    if (!targets || (targets.IsSequence() && targets.size() == 0)) {
      r.error(tpath, targets ? targets : n, "needs at least one target");
    } else if (r.is_list(tpath, targets)) {
      for (std::size_t k = 0; k < targets.size(); ++k)
        read_rule_target(r, index_path(tpath, k), targets[k], cfg, rule);
    }
    if (const auto when = n["when"]; when && !when.IsNull()) {
      const std::string wpath = key_path(path, "when");
      if (r.is_map(wpath, when)) {
        r.check_keys(wpath, when, kWhenKeys);
        rule.subjects = r.strings(key_path(wpath, "subjects"), when["subjects"]);
        rule.models = r.strings(key_path(wpath, "models"), when["models"]);
        warn_unnamed_targets(r, key_path(wpath, "models"), when["models"], rule, cfg);
        if (const auto md = when["metadata"]; md && !md.IsNull()) {
          const std::string mpath = key_path(wpath, "metadata");
          if (r.is_map(mpath, md))
            for (const auto& kv : md)
              if (auto v = r.string(key_path(mpath, kv.first.Scalar()), kv.second))
                rule.metadata.emplace_back(kv.first.Scalar(), *v);
        }
      }
    }
    if (const auto c = n["config"]; c && !c.IsNull()) {
      const std::string cpath = key_path(path, "config");
      if (rule.type != RuleType::Latency) r.warn(cpath, c, "has effect only in a latency-based-routing rule");
      if (r.is_map(cpath, c)) {
        r.check_keys(cpath, c, kLatencyConfigKeys);
        if (const auto v = c["lookback_window_minutes"])
          if (auto x =
                  r.integer(key_path(cpath, "lookback_window_minutes"), v, 1, 60, "an integer from 1 to 60"))
            rule.lookback = std::chrono::minutes(*x);
        if (const auto v = c["allowed_latency_overhead_percentage"])
          if (auto x = r.number(key_path(cpath, "allowed_latency_overhead_percentage"), v, 0, 100'000,
                                "a number from 0 to 100000"))
            rule.allowed_latency_overhead_percentage = *x;
      }
    }
    if (const auto v = n["affinity"])
      if (auto b = r.boolean(key_path(path, "affinity"), v)) rule.affinity = *b;
    if (const auto v = n["slow_start_seconds"])
      if (auto x = r.integer(key_path(path, "slow_start_seconds"), v, 0, 3600, "an integer from 0 to 3600"))
        rule.slow_start = std::chrono::seconds(*x);
    cfg.policy.rules.push_back(std::move(rule));
  }
}

void read_model_configs(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("model_configs", list) || !list) return;
  // A target id's own entry wins over a model name's; among model names, the first.
  std::vector<int> rank(cfg.policy.targets.size(), 0);  // 0 none, 1 by model name, 2 by id
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("model_configs", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kModelConfigKeys);
    std::string model;
    if (const auto m = n["model"]; !m) {
      r.error(key_path(path, "model"), n, "is required");
      continue;
    } else if (auto s = r.string(key_path(path, "model"), m)) {
      model = *s;
    } else {
      continue;
    }
    std::int64_t tpm = 0, rpm = 0;
    std::optional<std::uint32_t> allowed;
    std::chrono::seconds cooldown{0};
    if (const auto u = n["usage_limits"]; u && !u.IsNull()) {
      const std::string upath = key_path(path, "usage_limits");
      if (r.is_map(upath, u)) {
        r.check_keys(upath, u, kUsageLimitKeys);
        if (const auto v = u["tokens_per_minute"])
          if (auto x = r.integer(key_path(upath, "tokens_per_minute"), v, 1, 1'000'000'000'000ll,
                                 "a positive integer"))
            tpm = *x;
        if (const auto v = u["requests_per_minute"])
          if (auto x = r.integer(key_path(upath, "requests_per_minute"), v, 1, 1'000'000'000ll,
                                 "a positive integer"))
            rpm = *x;
      }
    }
    if (const auto f = n["failure_tolerance"]; f && !f.IsNull()) {
      const std::string fpath = key_path(path, "failure_tolerance");
      if (r.is_map(fpath, f)) {
        r.check_keys(fpath, f, kToleranceKeys);
        const auto a = f["allowed_failures_per_minute"], c = f["cooldown_period_minutes"];
        if (!a)
          r.error(key_path(fpath, "allowed_failures_per_minute"), f, "is required with failure_tolerance");
        if (!c) r.error(key_path(fpath, "cooldown_period_minutes"), f, "is required with failure_tolerance");
        if (a)
          if (auto x = r.integer(key_path(fpath, "allowed_failures_per_minute"), a, 0, 1'000'000,
                                 "an integer from 0 to 1000000"))
            allowed = static_cast<std::uint32_t>(*x);
        if (c)
          if (auto x = r.number(key_path(fpath, "cooldown_period_minutes"), c, 0.01, 1440,
                                "a number of minutes from 0.01 to 1440"))
            cooldown = std::chrono::seconds(std::max<long long>(1, std::llround(*x * 60)));
        if (!a || !c) allowed.reset();
      }
    }
    bool any = false;
    for (std::size_t k = 0; k < cfg.policy.targets.size(); ++k) {
      TargetConfig& t = cfg.policy.targets[k];
      const int how = t.id == model ? 2 : t.serves(model) ? 1 : 0;
      if (how == 0) continue;
      any = true;
      if (rank[k] >= how) continue;
      rank[k] = how;
      if (tpm) t.tpm = tpm;
      if (rpm) t.rpm = rpm;
      if (allowed) {
        t.allowed_failures_per_minute = allowed;
        t.breaker_cooldown = cooldown;
      }
    }
    if (!any) {
      std::vector<std::string> ids;
      for (const auto& x : cfg.policy.targets) ids.push_back(x.id);
      std::string msg = "no target is or serves the model " + smartlb::quoted(model);
      if (const auto hint = closest(model, ids); !hint.empty()) msg += " (did you mean \"" + hint + "\"?)";
      r.error(key_path(path, "model"), n["model"], msg);
    }
  }
}

// A quota group's declared limits are those of its targets (model_configs, or their backend's
// tpm/rpm): they must agree, and a target that declares none takes the group's. A target
// without a group of its own is in its backend's group, if any.
void check_quota_groups(Reader& r, const YAML::Node& root, Config& cfg) {
  struct Limits {
    std::int64_t tpm = 0, rpm = 0;
    std::string from;
  };
  const auto effective = [&](const TargetConfig& t) {
    Limits l{t.tpm, t.rpm, t.id};
    std::string group = t.quota_group;
    for (const auto& b : cfg.backends)
      if (b.name == t.backend) {
        if (!l.tpm) l.tpm = b.tpm;
        if (!l.rpm) l.rpm = b.rpm;
        if (group.empty()) group = b.quota_group;
      }
    return std::make_pair(group, l);
  };
  std::map<std::string, Limits> groups;
  for (std::size_t i = 0; i < cfg.policy.targets.size(); ++i) {
    const auto [group, l] = effective(cfg.policy.targets[i]);
    if (group.empty() || (!l.tpm && !l.rpm)) continue;
    auto [it, inserted] = groups.try_emplace(group, l);
    if (!inserted && (it->second.tpm != l.tpm || it->second.rpm != l.rpm))
      r.error(index_path("targets", i) + ".quota_group", root["targets"],
              "the quota group " + smartlb::quoted(group) + " is declared " + std::to_string(it->second.tpm) +
                  " TPM / " + std::to_string(it->second.rpm) + " RPM by " + smartlb::quoted(it->second.from) +
                  " but " + std::to_string(l.tpm) + " / " + std::to_string(l.rpm) +
                  " here: a group has one quota");
  }
  for (auto& t : cfg.policy.targets) {
    const auto [group, l] = effective(t);
    if (group.empty()) continue;
    t.quota_group = group;
    if (auto it = groups.find(group); it != groups.end() && !t.tpm && !t.rpm) {
      t.tpm = it->second.tpm;
      t.rpm = it->second.rpm;
    }
  }
}

// The file's entry of the target `id`, for a message's path and line: "targets[3]" at its
// `id`, or the list when no entry has that id.
std::pair<std::string, YAML::Node> target_entry(const YAML::Node& list, std::string_view id) {
  if (list && list.IsSequence())
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node n = list[i];
      if (n.IsMap() && n["id"] && n["id"].IsScalar() && n["id"].Scalar() == id)
        return {index_path("targets", i), n["id"]};
    }
  return {"targets", list};
}

void warn_unused_targets(Reader& r, const YAML::Node& list, const Config& cfg) {
  for (const auto& t : cfg.policy.targets) {
    const bool used =
        std::any_of(cfg.policy.rules.begin(), cfg.policy.rules.end(), [&](const RuleConfig& rule) {
          return std::any_of(rule.targets.begin(), rule.targets.end(),
                             [&](const RuleTarget& rt) { return rt.target == t.id; });
        });
    if (used) continue;
    const auto [path, at] = target_entry(list, t.id);
    r.warn(path, at, "no rule routes to the target " + smartlb::quoted(t.id));
  }
}

// The default rule over `backends` (today's policy: priority groups, then weight), each
// backend its own target named after it.
void add_implicit_rule(Config& cfg, const std::vector<const BackendConfig*>& backends) {
  RuleConfig rule;
  rule.id = "default";
  rule.type = RuleType::Priority;
  rule.implicit = true;
  for (const BackendConfig* b : backends) {
    TargetConfig t;
    t.id = b->name;
    t.backend = b->name;
    t.upstream_name = b->deployment_name;
    t.tpm = b->tpm;
    t.rpm = b->rpm;
    t.quota_group = b->quota_group;
    cfg.policy.targets.push_back(std::move(t));
    rule.targets.push_back(RuleTarget{b->name, b->weight, b->priority, {}});
  }
  cfg.policy.rules.push_back(std::move(rule));
}

}  // namespace

std::map<std::string, std::vector<std::string>> config_file_keys() {
  const auto list = [](const auto& keys) {
    return std::vector<std::string>(std::begin(keys), std::end(keys));
  };
  return {{"", list(kTopKeys)},
          {"backends", list(kBackendKeys)},
          {"backends.entra", list(kEntraKeys)},
          {"targets", list(kTargetKeys)},
          {"clients", list(kClientKeys)},
          {"clients.limits", list(kClientLimitKeys)},
          {"subject_limits", list(kSubjectLimitKeys)},
          {"subject_limits.limits", list(kClientLimitKeys)},
          {"token_issuers", list(kTokenIssuerKeys)},
          {"rules", list(kRuleKeys)},
          {"rules.when", list(kWhenKeys)},
          {"rules.load_balance_targets", list(kRuleTargetKeys)},
          {"rules.config", list(kLatencyConfigKeys)},
          {"model_configs", list(kModelConfigKeys)},
          {"model_configs.usage_limits", list(kUsageLimitKeys)},
          {"model_configs.failure_tolerance", list(kToleranceKeys)},
          {"redis", list(kRedisKeys)},
          {"admin", list(kAdminKeys)},
          {"admin.tokens", list(kAdminTokenKeys)}};
}

bool TargetConfig::serves(std::string_view model) const {
  if (model.empty()) return false;
  if (model == id || (!upstream_name.empty() && model == upstream_name)) return true;
  if (const auto slash = id.rfind('/');
      slash != std::string::npos && model == std::string_view(id).substr(slash + 1))
    return true;
  return std::find(aliases.begin(), aliases.end(), model) != aliases.end();
}

ConfigLoadResult load_config_text(const EnvMap& env, std::string_view text, const std::string& file_name) {
  ConfigLoadResult result = load_config_from_env(env, /*require_backends=*/false);
  // Keep the environment's errors, but go on reading the file so that every error is shown.
  std::vector<std::string> errors = std::move(result.errors);
  Config cfg;
  if (result.config) {
    cfg = std::move(*result.config);
  } else {
    // Re-read what could be read (backend names for references); errors are already counted.
    EnvMap backends_only;
    for (const auto& [k, v] : env)
      if (k.rfind("BACKEND_", 0) == 0) backends_only.emplace(k, v);
    if (auto partial = load_config_from_env(backends_only, false); partial.config)
      cfg = std::move(*partial.config);
  }
  Reader r(env, file_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    const std::string line = e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : "";
    errors.push_back(file_name + line + ": not valid YAML or JSON: " + e.msg);
    result.errors = std::move(errors);
    result.config.reset();
    return result;
  }
  const std::size_t env_backends = cfg.backends.size();
  if (root.IsNull()) {
    r.warn("(file)", root, "is empty");
  } else if (!root.IsMap()) {
    r.error("(file)", root, "must be a mapping with rules, targets, backends, ... at the top");
  } else {
    r.check_keys("", root, kTopKeys);
    std::set<int> walked;
    check_duplicate_keys(r, "", root, walked);
    try {
      for (const char* ignored : {"name", "type"})
        if (const auto n = root[ignored]; n && !n.IsScalar()) r.error(ignored, n, "must be a string");
      const YAML::Node rules = root["rules"];
      const bool file_has_rules = rules && rules.IsSequence() && rules.size() > 0;
      read_backends(r, env, root["backends"], /*azure_clients=*/!file_has_rules, cfg);
      read_targets(r, root["targets"], cfg);
      read_clients(r, root["clients"], cfg);
      read_subject_limits(r, root["subject_limits"], cfg);
      read_token_issuers(r, env, root["token_issuers"], cfg);
      read_rules(r, root["rules"], cfg);
      read_model_configs(r, root["model_configs"], cfg);
      read_redis(r, root["redis"], cfg);
      read_admin(r, root["admin"], cfg);
    } catch (const YAML::Exception& e) {  // a shape the checks above did not foresee
      const std::string line = e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : "";
      r.errors.push_back(file_name + line + ": cannot be read: " + e.msg);
    }
  }
  // The implicit default rule: every backend when the file has no rules, else the
  // environment's backends after the file's rules.
  std::vector<const BackendConfig*> implicit;
  const bool has_rules = !cfg.policy.rules.empty();
  for (std::size_t i = 0; i < cfg.backends.size(); ++i)
    if (!has_rules || i < env_backends) implicit.push_back(&cfg.backends[i]);
  for (const BackendConfig* b : implicit)
    if (find_target(cfg, b->name)) {
      const auto [path, at] = target_entry(root["targets"], b->name);
      r.error(path, at,
              "a target is named " + smartlb::quoted(b->name) +
                  " like a backend of the default rule; give it another id");
    }
  if (!implicit.empty()) add_implicit_rule(cfg, implicit);
  check_quota_groups(r, root, cfg);
  if (has_rules) warn_unused_targets(r, root["targets"], cfg);
  if (cfg.backends.empty())
    errors.push_back("BACKEND_1_URL: no backend is configured; set BACKEND_1_URL or list backends in " +
                     file_name);

  errors.insert(errors.end(), r.errors.begin(), r.errors.end());
  result.warnings.insert(result.warnings.end(), r.warnings.begin(), r.warnings.end());
  result.errors = std::move(errors);
  if (result.errors.empty()) {
    cfg.policy.file = file_name;
    cfg.policy.hash = sha256_hex(text);
    result.config = std::move(cfg);
  } else {
    result.config.reset();
  }
  return result;
}

ConfigLoadResult load_config(const EnvMap& env, const std::optional<std::string>& file) {
  std::string path;
  if (file) {
    path = *file;
  } else if (auto it = env.find("CONFIG_FILE"); it != env.end()) {
    path = it->second;
    if (path.empty()) {
      ConfigLoadResult r;
      r.errors.push_back("CONFIG_FILE: is set but empty");
      return r;
    }
  }
  if (path.empty()) {
    ConfigLoadResult r = load_config_from_env(env);
    if (r.config) {
      std::vector<const BackendConfig*> all;
      for (const auto& b : r.config->backends) all.push_back(&b);
      add_implicit_rule(*r.config, all);
    }
    return r;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigLoadResult r = load_config_from_env(env, false);
    r.config.reset();
    r.errors.push_back((file ? std::string("--config") : std::string("CONFIG_FILE")) +
                       ": cannot read the file " + smartlb::quoted(path));
    return r;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_config_text(env, text.str(), path);
}

std::string describe_source(const Config& cfg) {
  std::string out = std::to_string(cfg.backends.size()) + " backend(s), " +
                    std::to_string(cfg.policy.rules.size()) + " rule(s)";
  if (!cfg.policy.file.empty())
    out += " from " + cfg.policy.file + " (sha256 " + cfg.policy.hash.substr(0, 12) + ")";
  return out;
}

namespace {

// The name a rule's target is called with: its deployment or model, else the client's own
// (the rule's one model when it names exactly one).
std::string called_as(const RuleConfig& rule, const TargetConfig* t) {
  if (t && !t->upstream_name.empty()) return t->upstream_name;
  if (rule.models.size() == 1) return rule.models[0];
  return "the requested name";
}

}  // namespace

std::string describe_routing(const Config& cfg) {
  std::ostringstream out;
  out << describe_source(cfg) << "\n";
  for (const auto& b : cfg.backends)
    out << "  backend " << b.name << ": " << (b.url.tls ? "https" : "http") << "://" << b.url.host_header
        << b.url.base_path << (b.api_key.empty() ? " (client credentials pass through)" : "") << "\n";
  const auto type_name = [](RuleType t) {
    switch (t) {
      case RuleType::Weight:
        return "weight-based-routing";
      case RuleType::Latency:
        return "latency-based-routing";
      case RuleType::Priority:
        break;
    }
    return "priority-based-routing";
  };
  for (const auto& rule : cfg.policy.rules) {
    out << "  rule " << rule.id << (rule.implicit ? " (implicit)" : "") << ": " << type_name(rule.type);
    if (rule.subjects.empty() && rule.models.empty() && rule.metadata.empty()) out << ", every request";
    for (const auto& s : rule.subjects) out << ", subject " << s;
    for (const auto& m : rule.models) out << ", model " << m;
    for (const auto& [k, v] : rule.metadata) out << ", metadata " << k << "=" << v;
    if (rule.affinity) out << ", affinity";
    if (rule.slow_start.count()) out << ", slow start " << rule.slow_start.count() << " s";
    out << "\n";
    for (const auto& rt : rule.targets) {
      const TargetConfig* t = find_target(cfg, rt.target);
      out << "    -> " << rt.target;
      if (t) out << " (as " << called_as(rule, t) << " on " << t->backend << ")";
      if (rule.type == RuleType::Priority) out << " priority " << rt.priority;
      if (rule.type != RuleType::Latency) out << " weight " << rt.weight;
      if (!rt.override_params.empty()) out << ", " << rt.override_params.size() << " override(s)";
      if (t && (t->tpm || t->rpm)) out << ", quota " << t->tpm << " TPM / " << t->rpm << " RPM";
      if (t && t->allowed_failures_per_minute)
        out << ", breaker after " << *t->allowed_failures_per_minute << " failures/min";
      out << "\n";
    }
  }
  const std::size_t clients = cfg.client_api_keys.size() + cfg.policy.clients.size();
  std::vector<const TokenIssuerConfig*> issuers;
  for (const auto& t : cfg.client_token_issuers) issuers.push_back(&t);
  for (const auto& t : cfg.policy.token_issuers) issuers.push_back(&t);
  out << "  clients: ";
  if (clients && !issuers.empty())
    out << std::to_string(clients) + " key(s) or an Entra ID token required\n";
  else if (!issuers.empty())
    out << "an Entra ID token required\n";
  else
    out << (clients ? std::to_string(clients) + " key(s) required" : std::string("anyone (no keys)")) << "\n";
  for (const TokenIssuerConfig* t : issuers) {
    out << "  token issuer " << t->name << ": tenant " << t->tenant_id << ", audience";
    for (const auto& a : t->audiences) out << " " << a;
    if (!t->required_roles.empty()) {
      out << ", one of the roles";
      for (const auto& role : t->required_roles) out << " " << role;
    }
    if (!t->discovery_url.empty()) out << ", keys from " << t->discovery_url;
    out << "\n";
  }
  const auto limits_text = [](const ClientLimits& l) {
    std::string t;
    const auto add = [&](std::int64_t v, const char* what) {
      if (v) t += (t.empty() ? "" : ", ") + std::to_string(v) + " " + what;
    };
    add(l.tokens_per_minute, "tokens/min");
    add(l.requests_per_minute, "requests/min");
    add(l.tokens_per_day, "tokens/day");
    add(l.tokens_per_month, "tokens/month");
    return t;
  };
  for (const auto& c : cfg.policy.clients)
    if (c.limits.any()) out << "  budget of client " << c.name << ": " << limits_text(c.limits) << "\n";
  for (const auto& s : cfg.policy.subject_limits)
    out << "  budget of " << (s.subject == "*" ? std::string("every caller") : "subject " + s.subject)
        << (s.shared           ? " (shared)"
            : s.subject == "*" ? " (each its own)"
                               : " (each caller its own)")
        << ": " << limits_text(s.limits) << "\n";
  if (cfg.redis.enabled())
    out << "  shared through Redis: " << cfg.redis.url->redacted() << " (prefix " << cfg.redis.key_prefix
        << ", replica " << cfg.redis.replica_id << ")\n";
  return out.str();
}

}  // namespace smartlb
