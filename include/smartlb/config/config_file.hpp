#pragma once
// The configuration file (CONFIG_FILE, --config): backends, targets, clients, rules and
// model_configs in YAML or JSON, TrueFoundry's load-balancing schema for the rules. Combined
// with the environment: process settings and BACKEND_X_* backends come from there, and every
// problem of both is reported at once, each with its path in the file
// ("rules[2].load_balance_targets[0].weight: must be a positive integer, got \"0\"").
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/config/config_env.hpp"

namespace smartlb::config {

// The environment, and the file named by `file` or else by CONFIG_FILE (none: env only).
ConfigLoadResult load_config(const EnvMap& env, const std::optional<std::string>& file = std::nullopt);

// The environment and a file's text (`file_name` for messages and Policy::file). Pure: tests
// and the fuzz target call this.
ConfigLoadResult load_config_text(const EnvMap& env, std::string_view text, const std::string& file_name);

// The keys each section of the file takes ("" for the top level; "backends", "targets",
// "clients", "rules", "rules.when", "rules.load_balance_targets", "rules.config",
// "model_configs", "model_configs.usage_limits", "model_configs.failure_tolerance"), so a
// test can hold config/smartlb.schema.json to them.
std::map<std::string, std::vector<std::string>> config_file_keys();

// A short human summary of what `cfg` will route (smartlb --check-config): its source, then
// each backend, and each rule with its conditions, affinity and slow start and, per target, the
// name the target is called with, its weight, quota and breaker.
std::string describe_routing(const Config& cfg);

// What a configuration is and where it came from, as the summary, the start line and the reload
// line say it: "3 backend(s), 2 rule(s) from smartlb.yaml (sha256 0123456789ab)".
std::string describe_source(const Config& cfg);

}  // namespace smartlb::config
