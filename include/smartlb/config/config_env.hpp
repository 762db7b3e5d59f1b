#pragma once
// Builds a Config from environment variables, reporting every problem at once, each
// naming its variable.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "smartlb/config/config.hpp"

namespace smartlb::config {

using EnvMap = std::map<std::string, std::string>;

struct ConfigLoadResult {
  std::optional<Config> config;     // set only when `errors` is empty
  std::vector<std::string> errors;  // "BACKEND_2_WEIGHT: must be a positive integer, got \"0\""
  std::vector<std::string> warnings;
};

// `require_backends`: at least one BACKEND_X_URL (false when a config file may declare them).
ConfigLoadResult load_config_from_env(const EnvMap& env, bool require_backends = true);

// The process environment as a map.
EnvMap current_environment();

}  // namespace smartlb::config
