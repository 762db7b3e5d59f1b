// Checks across the config file's sections, and the implicit default rule.
#include <algorithm>
#include <map>

#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {

const TargetConfig* find_target(const Config& cfg, std::string_view id) {
  for (const auto& t : cfg.policy.targets)
    if (t.id == id) return &t;
  return nullptr;
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
              "the quota group " + smartlb::config::quoted(group) + " is declared " +
                  std::to_string(it->second.tpm) + " TPM / " + std::to_string(it->second.rpm) + " RPM by " +
                  smartlb::config::quoted(it->second.from) + " but " + std::to_string(l.tpm) + " / " +
                  std::to_string(l.rpm) + " here: a group has one quota");
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
    r.warn(path, at, "no rule routes to the target " + smartlb::config::quoted(t.id));
  }
}

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

void add_default_rule(Reader& r, const YAML::Node& root, std::size_t env_backends, Config& cfg) {
  std::vector<const BackendConfig*> implicit;
  const bool has_rules = !cfg.policy.rules.empty();
  for (std::size_t i = 0; i < cfg.backends.size(); ++i)
    if (!has_rules || i < env_backends) implicit.push_back(&cfg.backends[i]);
  for (const BackendConfig* b : implicit)
    if (find_target(cfg, b->name)) {
      const auto [path, at] = target_entry(root["targets"], b->name);
      r.error(path, at,
              "a target is named " + smartlb::config::quoted(b->name) +
                  " like a backend of the default rule; give it another id");
    }
  if (!implicit.empty()) add_implicit_rule(cfg, implicit);
}

void check_cost_budgets(Reader& r, const YAML::Node& root, const Config& cfg) {
  if (!cfg.policy.prices.empty()) return;
  // A cost budget without prices could never count anything: the file must say what costs what.
  for (const char* section : {"clients", "subject_limits"}) {
    const YAML::Node list = root[section];
    if (!list || !list.IsSequence()) continue;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node limits = list[i].IsMap() ? list[i]["limits"] : YAML::Node();
      if (!limits || !limits.IsMap()) continue;
      for (const char* key : {"cost_per_day", "cost_per_month"})
        if (const auto v = limits[key])
          r.error(key_path(key_path(index_path(section, i), "limits"), key), v,
                  "needs the prices section (what each model costs; docs/operations.md#cost)");
    }
  }
}

}  // namespace smartlb::config::file
