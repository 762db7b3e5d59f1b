#include "smartlb/config/config_file.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <sstream>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/base/text.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config {
namespace {

using namespace file;

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr);
  std::string out;
  base::append_hex(out, {digest, n});
  return out;
}

// The environment's configuration, to which the file adds. With errors, what could be read of
// its backends, so that the file's references to them are checked; the errors are the caller's.
Config environment_part(const EnvMap& env, ConfigLoadResult& result) {
  if (result.config) return std::move(*result.config);
  EnvMap backends_only;
  for (const auto& [k, v] : env)
    if (k.rfind("BACKEND_", 0) == 0) backends_only.emplace(k, v);
  if (auto partial = load_config_from_env(backends_only, false); partial.config)
    return std::move(*partial.config);
  return {};
}

// Every section of a document that is a mapping, in the order their references need.
void read_sections(Reader& r, const YAML::Node& root, Config& cfg) {
  r.check_keys("", root, kTopKeys);
  check_duplicate_keys(r, root);
  try {
    // TrueFoundry's header: accepted and ignored.
    for (const char* ignored : {"name", "type"})
      if (const auto n = root[ignored]; n && !n.IsScalar()) r.error(ignored, n, "must be a string");
    const YAML::Node rules = root["rules"];
    const bool file_has_rules =
        (rules && rules.IsSequence() && rules.size() > 0) || root["virtual_models"] || root["integrations"];
    read_backends(r, root["backends"], /*azure_clients=*/!file_has_rules, cfg);
    read_targets(r, root["targets"], cfg);
    read_clients(r, root["clients"], cfg);
    read_subject_limits(r, root["subject_limits"], cfg);
    read_priority_classes(r, root, cfg);
    read_token_issuers(r, root["token_issuers"], cfg);
    read_virtual_models(r, root, cfg);
    read_rules(r, root["rules"], cfg);
    read_model_configs(r, root["model_configs"], cfg);
    read_redis(r, root["redis"], cfg);
    read_admin(r, root["admin"], cfg);
    read_prices(r, root["prices"], cfg);
    check_cost_budgets(r, root, cfg);
  } catch (const YAML::Exception& e) {  // a shape the checks above did not foresee
    const std::string line = e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : "";
    r.errors.push_back(r.file() + line + ": cannot be read: " + e.msg);
  }
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
          {"priority_classes", list(kPriorityClassKeys)},
          {"subject_limits.limits", list(kClientLimitKeys)},
          {"token_issuers", list(kTokenIssuerKeys)},
          {"rules", list(kRuleKeys)},
          {"rules.when", list(kWhenKeys)},
          {"rules.load_balance_targets", list(kRuleTargetKeys)},
          {"rules.load_balance_targets.retry_config", list(kRetryConfigKeys)},
          {"virtual_models", list(kVirtualAccountKeys)},
          {"virtual_models.integrations", list(kVirtualModelKeys)},
          {"virtual_models.integrations.routing_config", list(kRoutingConfigKeys)},
          {"virtual_models.integrations.routing_config.sticky_routing", list(kStickyKeys)},
          {"virtual_models.integrations.routing_config.sticky_routing.session_identifiers",
           list(kSessionIdentifierKeys)},
          {"rules.config", list(kLatencyConfigKeys)},
          {"model_configs", list(kModelConfigKeys)},
          {"model_configs.usage_limits", list(kUsageLimitKeys)},
          {"model_configs.failure_tolerance", list(kToleranceKeys)},
          {"redis", list(kRedisKeys)},
          {"admin", list(kAdminKeys)},
          {"admin.tokens", list(kAdminTokenKeys)},
          {"prices", list(kPricesKeys)},
          {"prices.models", list(kModelPriceKeys)}};
}

ConfigLoadResult load_config_text(const EnvMap& env, std::string_view text, const std::string& file_name) {
  ConfigLoadResult result = load_config_from_env(env, /*require_backends=*/false);
  // Keep the environment's errors, but go on reading the file so that every error is shown.
  std::vector<std::string> errors = std::move(result.errors);
  Config cfg = environment_part(env, result);
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
  if (root.IsNull())
    r.warn("(file)", root, "is empty");
  else if (!root.IsMap())
    r.error("(file)", root, "must be a mapping with rules, targets, backends, ... at the top");
  else
    read_sections(r, root, cfg);
  const bool has_rules = !cfg.policy.rules.empty();
  add_default_rule(r, root, env_backends, cfg);
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
                       ": cannot read the file " + smartlb::config::quoted(path));
    return r;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_config_text(env, text.str(), path);
}

}  // namespace smartlb::config
