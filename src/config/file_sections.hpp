#pragma once
// The readers of the config file's top-level sections, one file each, and the checks across
// sections. Each reads its part of the document into `cfg` and reports what is wrong through
// the Reader; they run in the order of load_config_text, since later sections refer to earlier
// ones (targets name backends, rules name targets, model_configs name targets or models).
// Private to the config module.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_reader.hpp"
#include "smartlb/config/config.hpp"

namespace smartlb::config::file {

// `azure_clients`: whether any request may reach these backends (a file without rules makes
// them the default rule), Azure-style ones included; else only through the rules' targets.
void read_backends(Reader& r, const YAML::Node& list, bool azure_clients, Config& cfg);  // file_backends.cpp
void read_targets(Reader& r, const YAML::Node& list, Config& cfg);                       // file_targets.cpp
void read_clients(Reader& r, const YAML::Node& list, Config& cfg);                       // file_clients.cpp
void read_subject_limits(Reader& r, const YAML::Node& list, Config& cfg);                // file_clients.cpp
// `priority_classes`, and the clients' `priority_class` (after read_clients).
void read_priority_classes(Reader& r, const YAML::Node& root, Config& cfg);  // file_priority_classes.cpp
void read_token_issuers(Reader& r, const YAML::Node& list, Config& cfg);     // file_token_issuers.cpp
void read_rules(Reader& r, const YAML::Node& list, Config& cfg);             // file_rules.cpp
// TrueFoundry's virtual models (the file as one account, or `virtual_models`): rules, first.
void read_virtual_models(Reader& r, const YAML::Node& root, Config& cfg);  // file_rules.cpp
void read_model_configs(Reader& r, const YAML::Node& list, Config& cfg);   // file_model_configs.cpp
void read_redis(Reader& r, const YAML::Node& n, Config& cfg);              // file_redis.cpp
void read_admin(Reader& r, const YAML::Node& n, Config& cfg);              // file_admin.cpp
void read_prices(Reader& r, const YAML::Node& n, Config& cfg);             // file_prices.cpp

// Across sections (file_cross_checks.cpp).

// The target `id`, or null.
const TargetConfig* find_target(const Config& cfg, std::string_view id);
// The file's entry of the target `id`, for a message's path and line: "targets[3]" at its
// `id`, or the list when no entry has that id.
std::pair<std::string, YAML::Node> target_entry(const YAML::Node& list, std::string_view id);
// The default rule over `backends` (today's policy: priority groups, then weight), each
// backend its own target named after it.
void add_implicit_rule(Config& cfg, const std::vector<const BackendConfig*>& backends);
// The implicit default rule: every backend when the file has no rules, else the environment's
// backends (the first `env_backends`) after the file's rules. A file target named like one of
// its backends is an error.
void add_default_rule(Reader& r, const YAML::Node& root, std::size_t env_backends, Config& cfg);
// A quota group's declared limits must agree; a target that declares none takes the group's.
void check_quota_groups(Reader& r, const YAML::Node& root, Config& cfg);
// A cost budget (cost_per_day, cost_per_month) needs the prices section.
void check_cost_budgets(Reader& r, const YAML::Node& root, const Config& cfg);
// A file target no rule routes to is a warning.
void warn_unused_targets(Reader& r, const YAML::Node& list, const Config& cfg);

}  // namespace smartlb::config::file
