// The config file's `rules`, TrueFoundry's schema: which requests a rule takes (`when`), the
// targets it routes them to and how (weight, latency or priority).
#include <algorithm>
#include <charconv>
#include <set>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/rule_types.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {
namespace {

// HTTP statuses as TrueFoundry writes them: ["429", "500"] (numbers accepted too).
std::optional<std::vector<unsigned>> read_statuses(Reader& r, const std::string& path, const YAML::Node& n) {
  if (!r.is_list(path, n)) return std::nullopt;
  std::vector<unsigned> out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string ipath = index_path(path, i);
    const auto s = r.string(ipath, n[i]);
    if (!s) continue;
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
    if (ec != std::errc{} || p != s->data() + s->size() || v < 100 || v > 599)
      r.error(ipath, n[i], "must be an HTTP status from 100 to 599, got " + smartlb::config::quoted(*s));
    else
      out.push_back(v);
  }
  return out;
}

// TrueFoundry's per-target retry_config, fallback_status_codes and fallback_candidate, with its
// documented defaults where the key is given without them; its target keys smartlb does not
// apply are accepted and said so.
void read_target_options(Reader& r, const std::string& path, const YAML::Node& n, RuleTarget& rt) {
  if (const auto c = n["retry_config"]; c && !c.IsNull()) {
    const std::string cpath = key_path(path, "retry_config");
    RetryConfig retry;
    if (r.is_map(cpath, c)) {
      r.check_keys(cpath, c, kRetryConfigKeys);
      if (const auto v = c["attempts"])
        if (auto x = r.integer(key_path(cpath, "attempts"), v, 0, 10, "an integer from 0 to 10"))
          retry.attempts = static_cast<std::uint32_t>(*x);
      if (const auto v = c["delay"])
        if (auto x = r.integer(key_path(cpath, "delay"), v, 0, 60'000, "milliseconds from 0 to 60000"))
          retry.delay = std::chrono::milliseconds(*x);
      if (const auto v = c["on_status_codes"])
        if (auto codes = read_statuses(r, key_path(cpath, "on_status_codes"), v))
          retry.on_status = std::move(*codes);
      rt.retry = std::move(retry);
    }
  }
  if (const auto v = n["fallback_status_codes"]; v && !v.IsNull())
    rt.fallback_status = read_statuses(r, key_path(path, "fallback_status_codes"), v);
  if (const auto v = n["fallback_candidate"])
    if (auto b = r.boolean(key_path(path, "fallback_candidate"), v)) rt.fallback_candidate = *b;
  for (const char* key : {"sla_cutoff", "headers_override", "timeout_ms"})
    if (const auto v = n[key])
      r.warn(key_path(path, key), v,
             "is TrueFoundry's and has no effect in smartlb (docs/routing-policy.md, From TrueFoundry)");
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
      std::string msg = "no target has the id " + smartlb::config::quoted(*s);
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
    if (const RuleTypeInfo& t = rule_type_info(rule.type); !t.reads_weight)
      r.warn(key_path(path, "weight"), w, "has no effect in a " + std::string(t.name) + " rule");
    if (auto x = r.integer(key_path(path, "weight"), w, 1, 1'000'000, "a positive integer"))
      rt.weight = static_cast<std::uint32_t>(*x);
  }
  if (const auto p = n["priority"]) {
    if (!rule_type_info(rule.type).reads_priority)
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
  read_target_options(r, path, n, rt);
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
             "the target " + smartlb::config::quoted(t->id) + " neither serves " +
                 smartlb::config::quoted(rule.models[k]) +
                 " nor has a deployment or model to be called with, so its backend is asked for " +
                 smartlb::config::quoted(rule.models[k]) +
                 " (give the target a deployment or model; an alias if its backend knows that name)");
    }
}

// `type`: one of TrueFoundry's three routing types.
void read_rule_type(Reader& r, const std::string& path, const YAML::Node& n, RuleConfig& rule) {
  if (const auto type = n["type"]; !type) {
    r.error(key_path(path, "type"), n, "is required: " + rule_type_names());
  } else if (auto s = r.string(key_path(path, "type"), type)) {
    if (const auto named = rule_type_named(*s)) {
      rule.type = *named;
    } else {
      std::vector<std::string_view> names;
      for (const RuleTypeInfo& t : rule_types()) names.push_back(t.name);
      std::string msg = "must be " + rule_type_names() + ", got " + smartlb::config::quoted(*s);
      if (const auto hint = closest(*s, names); !hint.empty()) msg += " (did you mean \"" + hint + "\"?)";
      r.error(key_path(path, "type"), type, msg);
    }
  }
}

// `when`: the subjects, models and metadata a request must match.
void read_when(Reader& r, const std::string& path, const YAML::Node& n, const Config& cfg, RuleConfig& rule) {
  const auto when = n["when"];
  const std::string wpath = key_path(path, "when");
  if (!when || when.IsNull() || !r.is_map(wpath, when)) return;
  r.check_keys(wpath, when, kWhenKeys);
  rule.subjects = r.strings(key_path(wpath, "subjects"), when["subjects"]);
  rule.models = r.strings(key_path(wpath, "models"), when["models"]);
  // TrueFoundry writes ["*"] for any.
  for (auto* list : {&rule.subjects, &rule.models})
    if (std::find(list->begin(), list->end(), "*") != list->end()) list->clear();
  warn_unnamed_targets(r, key_path(wpath, "models"), when["models"], rule, cfg);
  const auto md = when["metadata"];
  const std::string mpath = key_path(wpath, "metadata");
  if (!md || md.IsNull() || !r.is_map(mpath, md)) return;
  for (const auto& kv : md)
    if (auto v = r.string(key_path(mpath, kv.first.Scalar()), kv.second))
      rule.metadata.emplace_back(kv.first.Scalar(), *v);
}

// `config`: the latency-based-routing rule's settings.
void read_latency_config(Reader& r, const std::string& path, const YAML::Node& n, RuleConfig& rule) {
  const auto c = n["config"];
  if (!c || c.IsNull()) return;
  const std::string cpath = key_path(path, "config");
  if (!rule_type_info(rule.type).reads_latency)
    r.warn(cpath, c, "has effect only in a latency-based-routing rule");
  if (!r.is_map(cpath, c)) return;
  r.check_keys(cpath, c, kLatencyConfigKeys);
  if (const auto v = c["lookback_window_minutes"])
    if (auto x = r.integer(key_path(cpath, "lookback_window_minutes"), v, 1, 60, "an integer from 1 to 60"))
      rule.lookback = std::chrono::minutes(*x);
  if (const auto v = c["allowed_latency_overhead_percentage"])
    if (auto x = r.number(key_path(cpath, "allowed_latency_overhead_percentage"), v, 0, 100'000,
                          "a number from 0 to 100000"))
      rule.allowed_latency_overhead_percentage = *x;
}

// A rule's (or a virtual model's routing_config's) `load_balance_targets`: at least one.
void read_rule_targets(Reader& r, const std::string& path, const YAML::Node& n, const Config& cfg,
                       RuleConfig& rule) {
  const auto targets = n["load_balance_targets"];
  const std::string tpath = key_path(path, "load_balance_targets");
  if (!targets || (targets.IsSequence() && targets.size() == 0)) {
    r.error(tpath, targets ? targets : n, "needs at least one target");
  } else if (r.is_list(tpath, targets)) {
    for (std::size_t k = 0; k < targets.size(); ++k)
      read_rule_target(r, index_path(tpath, k), targets[k], cfg, rule);
  }
}

}  // namespace

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
        r.error(key_path(path, "id"), id, "duplicates another rule's id " + smartlb::config::quoted(*s));
      rule.id = *s;
    }
    read_rule_type(r, path, n, rule);
    read_rule_targets(r, path, n, cfg, rule);
    read_when(r, path, n, cfg, rule);
    read_latency_config(r, path, n, rule);
    if (const auto v = n["affinity"])
      if (auto b = r.boolean(key_path(path, "affinity"), v)) rule.affinity = *b;
    if (const auto v = n["slow_start_seconds"])
      if (auto x = r.integer(key_path(path, "slow_start_seconds"), v, 0, 3600, "an integer from 0 to 3600"))
        rule.slow_start = std::chrono::seconds(*x);
    cfg.policy.rules.push_back(std::move(rule));
  }
}

namespace {

// A virtual model's `routing_config`: its strategy, targets and sticky routing, as a rule's.
void read_routing_config(Reader& r, const std::string& path, const YAML::Node& c, const Config& cfg,
                         RuleConfig& rule) {
  if (!c || !r.is_map(path, c)) {
    if (!c) r.error(path, c, "is required");
    return;
  }
  r.check_keys(path, c, kRoutingConfigKeys);
  read_rule_type(r, path, c, rule);
  read_rule_targets(r, path, c, cfg, rule);
  // Sticky routing: requests with the same session key keep to one target while it is available
  // (smartlb's affinity, from the named header); its ttl is not needed: the choice is a hash.
  const auto sticky = c["sticky_routing"];
  if (!sticky || sticky.IsNull()) return;
  const std::string spath = key_path(path, "sticky_routing");
  if (!r.is_map(spath, sticky)) return;
  r.check_keys(spath, sticky, kStickyKeys);
  if (const auto v = sticky["ttl_seconds"])
    r.integer(key_path(spath, "ttl_seconds"), v, 1, 31'536'000, "seconds");
  const auto ids = sticky["session_identifiers"];
  const std::string ipath = key_path(spath, "session_identifiers");
  if (!ids || !r.is_list(ipath, ids) || ids.size() == 0) {
    r.error(ipath, ids ? ids : sticky, "needs at least one identifier");
    return;
  }
  const std::string first = index_path(ipath, 0);
  if (!r.is_map(first, ids[0])) return;
  r.check_keys(first, ids[0], kSessionIdentifierKeys);
  const auto source = r.string(key_path(first, "source"), ids[0]["source"]);
  if (source && *source != "headers")
    r.error(key_path(first, "source"), ids[0]["source"],
            "must be headers, got " + smartlb::config::quoted(*source));
  if (auto key = r.string(key_path(first, "key"), ids[0]["key"])) {
    rule.affinity = true;
    rule.affinity_header = *key;
  }
}

// One provider account of TrueFoundry's virtual models: each integration becomes a rule whose
// model is "{account}/{name}" (and its slug), ahead of the file's `rules`.
void read_virtual_account(Reader& r, const std::string& path, const YAML::Node& account, Config& cfg,
                          std::vector<RuleConfig>& out) {
  if (const auto t = account["type"]; t && t.IsScalar() && t.Scalar() != "provider-account/virtual-model")
    r.error(key_path(path, "type"), t,
            "must be provider-account/virtual-model, got " + smartlb::config::quoted(t.Scalar()));
  const auto name = r.string(key_path(path, "name"), account["name"]);
  if (!account["name"]) r.error(key_path(path, "name"), account, "is required");
  const auto list = account["integrations"];
  const std::string lpath = key_path(path, "integrations");
  if (!list || !r.is_list(lpath, list)) {
    if (!list) r.error(lpath, account, "is required");
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string vpath = index_path(lpath, i);
    const YAML::Node v = list[i];
    if (!r.is_map(vpath, v)) continue;
    r.check_keys(vpath, v, kVirtualModelKeys);
    if (const auto t = v["type"]; t && t.IsScalar() && t.Scalar() != "integration/model/virtual")
      r.error(key_path(vpath, "type"), t,
              "must be integration/model/virtual, got " + smartlb::config::quoted(t.Scalar()));
    const auto model = r.string(key_path(vpath, "name"), v["name"]);
    if (!v["name"]) r.error(key_path(vpath, "name"), v, "is required");
    RuleConfig rule;
    rule.id = (name ? *name : std::string()) + "/" + (model ? *model : std::string());
    rule.models.push_back(rule.id);
    if (const auto slug = v["slug"])
      if (auto s = r.string(key_path(vpath, "slug"), slug)) rule.models.push_back(*s);
    read_routing_config(r, key_path(vpath, "routing_config"), v["routing_config"], cfg, rule);
    out.push_back(std::move(rule));
  }
}

}  // namespace

void read_virtual_models(Reader& r, const YAML::Node& root, Config& cfg) {
  std::vector<RuleConfig> rules;
  // The file itself is a virtual model account (TrueFoundry's manifest, backends appended) ...
  if (const auto t = root["type"]; t && t.IsScalar() && t.Scalar() == "provider-account/virtual-model")
    read_virtual_account(r, "", root, cfg, rules);
  else if (const auto i = root["integrations"])
    r.error("integrations", i, "belongs to a file of type provider-account/virtual-model");
  // ... or lists accounts under virtual_models.
  if (const auto list = root["virtual_models"]; list && r.is_list("virtual_models", list))
    for (std::size_t i = 0; i < list.size(); ++i)
      if (r.is_map(index_path("virtual_models", i), list[i])) {
        r.check_keys(index_path("virtual_models", i), list[i], kVirtualAccountKeys);
        read_virtual_account(r, index_path("virtual_models", i), list[i], cfg, rules);
      }
  for (auto& rule : rules) {
    const bool clash = std::any_of(cfg.policy.rules.begin(), cfg.policy.rules.end(),
                                   [&](const RuleConfig& o) { return o.id == rule.id; });
    if (clash)
      r.error("virtual_models", root,
              "the virtual model " + smartlb::config::quoted(rule.id) + " is declared twice");
    cfg.policy.rules.push_back(std::move(rule));
  }
}

}  // namespace smartlb::config::file
