#include "smartlb/net/snapshot.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "smartlb/routing/selectors/latency_selector.hpp"
#include "smartlb/routing/selectors/priority_selector.hpp"
#include "smartlb/routing/selectors/weighted_selector.hpp"

namespace smartlb::net {
namespace {

// Declared per-minute quotas scaled to the window, rounded down like Azure's own accounting
// (and never to zero).
std::int64_t scale_to_window(std::int64_t per_minute, std::chrono::milliseconds window) {
  if (per_minute <= 0) return 0;
  constexpr std::int64_t kMinuteMs = 60 * 1000;
  const std::int64_t ms = window.count();
  return std::max<std::int64_t>(per_minute / kMinuteMs * ms + per_minute % kMinuteMs * ms / kMinuteMs, 1);
}

routing::PoolMember backend_member(const config::Config& cfg, const config::BackendConfig& b) {
  routing::PoolMember m;
  m.name = b.name;
  m.priority = b.priority;
  m.weight = b.weight;
  m.deployment_override = b.deployment_name;
  m.tokens_per_window = scale_to_window(b.tpm, cfg.quota_window);
  m.requests_per_window = scale_to_window(b.rpm, cfg.quota_window);
  m.quota_window = std::chrono::duration_cast<base::Nanos>(cfg.quota_window);
  m.quota_group = b.quota_group;
  return m;
}

std::vector<PreparedBackend> prepare(const config::Config& cfg,
                                     credentials::entra::CredentialService* credentials) {
  std::vector<PreparedBackend> out;
  for (const auto& b : cfg.backends) {
    PreparedBackend p{"Bearer " + b.api_key, nullptr};
    if (b.auth == config::AuthStyle::Entra && credentials) p.entra = credentials->credential_for(b);
    out.push_back(std::move(p));
  }
  return out;
}

std::unique_ptr<routing::Selector> make_selector(const config::RuleConfig& rule,
                                                 routing::LatencyStats* latency) {
  switch (rule.type) {
    case config::RuleType::Latency:
      if (latency)
        return std::make_unique<routing::LatencySelector>(
            *latency, std::chrono::duration_cast<base::Nanos>(rule.lookback),
            rule.allowed_latency_overhead_percentage);
      [[fallthrough]];  // no statistics (a snapshot built without a server): weight alone
    case config::RuleType::Weight:
      return std::make_unique<routing::WeightedSelector>();
    case config::RuleType::Priority:
      break;
  }
  return std::make_unique<routing::PrioritySelector>();
}

// One target per backend, named after it, with its deployment rename and quota: what the
// implicit default rule routes to, and the rules of resources and of every backend.
std::vector<config::TargetConfig> backend_targets(const config::Config& cfg) {
  std::vector<config::TargetConfig> targets;
  for (const auto& b : cfg.backends) {
    config::TargetConfig t;
    t.id = b.name;
    t.backend = b.name;
    t.upstream_name = b.deployment_name;
    t.tpm = b.tpm;
    t.rpm = b.rpm;
    t.quota_group = b.quota_group;
    targets.push_back(std::move(t));
  }
  return targets;
}

// A rule over the backends `keep` chooses, each by its own priority and weight.
config::RuleConfig backend_rule(const config::Config& cfg, std::string id,
                                const std::function<bool(std::size_t)>& keep) {
  config::RuleConfig rule;
  rule.id = std::move(id);
  rule.implicit = true;
  for (std::size_t i = 0; i < cfg.backends.size(); ++i)
    if (keep(i))
      rule.targets.push_back(
          config::RuleTarget{cfg.backends[i].name, cfg.backends[i].weight, cfg.backends[i].priority, {}});
  return rule;
}

// The rules of `cfg`, or the implicit default rule over every backend when it has none (a
// Config built in code rather than loaded).
std::vector<config::RuleConfig> rules_of(const config::Config& cfg,
                                         std::vector<config::TargetConfig>& targets) {
  if (!cfg.policy.rules.empty()) return cfg.policy.rules;
  for (config::TargetConfig& t : backend_targets(cfg)) targets.push_back(std::move(t));
  return {backend_rule(cfg, "default", [](std::size_t) { return true; })};
}

// FIRST_TOKEN_TIMEOUT_SECONDS (or a target's): unset learned, 0 off, else fixed.
routing::FirstTokenSetting first_token_setting(const std::optional<std::chrono::milliseconds>& configured) {
  if (!configured) return {};
  if (configured->count() == 0) return {routing::FirstTokenSetting::Mode::Off};
  return {routing::FirstTokenSetting::Mode::Fixed, std::chrono::duration_cast<base::Nanos>(*configured)};
}

// The names a rule's target adds to the model catalog (net/model_catalog.hpp): what the rule lists
// in `when.models`, or else what the target serves: its deployment or model, its aliases and the
// last part of its id (a backend's own target, named after the backend, only its deployment name).
void add_catalog_names(Rule& rule, const config::RuleConfig& rc, const config::TargetConfig& t) {
  if (!rc.models.empty()) {
    if (rule.catalog.empty()) rule.catalog = rc.models;
    return;
  }
  if (!t.upstream_name.empty()) rule.catalog.push_back(t.upstream_name);
  if (rc.implicit) return;
  for (const std::string& a : t.aliases) rule.catalog.push_back(a);
  const auto slash = t.id.rfind('/');
  rule.catalog.push_back(slash == std::string::npos ? t.id : t.id.substr(slash + 1));
}

// What a rule is built from: the targets it may name and where their backends are.
struct RuleInputs {
  const config::Config& cfg;
  routing::BackendIds& ids;
  routing::LatencyStats* latency;
  std::unordered_map<std::string_view, const config::TargetConfig*> target_by_id;
  std::unordered_map<std::string_view, std::size_t> backend_at;
};

// The rule `rc` over those of its targets whose backend `keep` chooses.
Rule make_rule(const config::RuleConfig& rc, RuleInputs& in, const std::function<bool(std::size_t)>& keep) {
  const config::Config& cfg = in.cfg;
  Rule rule;
  rule.id = rc.id;
  rule.type = rc.type;
  rule.when = routing::RuleConditions{rc.subjects, rc.models, rc.metadata};
  rule.affinity = rc.affinity;
  rule.affinity_header = rc.affinity_header;
  rule.slow_start = std::chrono::duration_cast<base::Nanos>(rc.slow_start);
  rule.lookback = std::chrono::duration_cast<base::Nanos>(rc.lookback);
  rule.implicit = rc.implicit;
  std::vector<routing::PoolMember> rule_members;
  for (const config::RuleTarget& rt : rc.targets) {
    const auto t = in.target_by_id.find(rt.target);
    if (t == in.target_by_id.end()) continue;  // validation refuses such a configuration
    const auto b = in.backend_at.find(t->second->backend);
    if (b == in.backend_at.end() || !keep(b->second)) continue;
    const config::BackendConfig& backend = cfg.backends[b->second];
    routing::PoolMember m = backend_member(cfg, backend);  // named after its backend: its id, its state
    m.priority = rt.priority;
    m.weight = rt.weight;
    m.deployment_override = t->second->upstream_name;
    m.fallback_candidate = rt.fallback_candidate;
    if (!t->second->quota_group.empty()) m.quota_group = t->second->quota_group;
    // A target's own quota (model_configs) or else its backend's, per deployment.
    m.tokens_per_window = scale_to_window(t->second->tpm ? t->second->tpm : backend.tpm, cfg.quota_window);
    m.requests_per_window = scale_to_window(t->second->rpm ? t->second->rpm : backend.rpm, cfg.quota_window);
    rule_members.push_back(std::move(m));
    RouteTarget route;
    route.backend = b->second;
    route.target_id = t->second->id;
    route.upstream_name = t->second->upstream_name;
    for (const auto& [key, value] : rt.override_params) route.overrides.push_back(http::BodyEdit{key, value});
    route.renamed = route.overrides;
    if (!route.upstream_name.empty())
      route.renamed.push_back(http::BodyEdit{"model", http::json_string(route.upstream_name)});
    route.allowed_failures_per_minute = t->second->allowed_failures_per_minute;
    route.breaker_cooldown = std::chrono::duration_cast<base::Nanos>(t->second->breaker_cooldown);
    route.retry = rt.retry;
    route.fallback_status = rt.fallback_status;
    route.first_token = first_token_setting(t->second->first_token_timeout ? t->second->first_token_timeout
                                                                           : cfg.first_token_timeout);
    rule.route.push_back(std::move(route));
    add_catalog_names(rule, rc, *t->second);
  }
  rule.table = routing::RoutingTable(std::move(rule_members), in.ids);
  rule.selector = make_selector(rc, in.latency);
  return rule;
}

// The resources of the snapshot's backends, the rule of each, and every rule restricted to
// each of them. Two resources whose tags collide (40 bits: about one configuration in 10^10
// with a hundred resources) share the first one's tag: said at load.
void add_resources(Snapshot& snap, const std::vector<config::RuleConfig>& rules, RuleInputs& in) {
  const config::Config& cfg = in.cfg;
  std::unordered_map<std::string, std::uint32_t> by_name;
  for (std::size_t i = 0; i < cfg.backends.size(); ++i) {
    const config::BackendConfig& b = cfg.backends[i];
    std::string name = b.resource.empty()
                           ? stateful::default_resource(b.url.tls, b.url.host, b.url.port, b.url.base_path)
                           : b.resource;
    auto [it, added] = by_name.emplace(name, static_cast<std::uint32_t>(snap.resources.size()));
    if (added)
      snap.resources.push_back(
          Resource{std::move(name), b.resource.empty() ? b.name : b.resource, {}, {}, nullptr});
    snap.resources[it->second].backends.push_back(i);
    snap.resource_of.push_back(it->second);
  }
  std::vector<config::TargetConfig> own = backend_targets(cfg);
  RuleInputs backends_in{cfg, in.ids, in.latency, {}, in.backend_at};
  for (const auto& t : own) backends_in.target_by_id.emplace(t.id, &t);
  for (std::uint32_t r = 0; r < snap.resources.size(); ++r) {
    Resource& res = snap.resources[r];
    res.tag = stateful::resource_tag(res.name);
    const auto [at, fresh] = snap.resource_by_tag.emplace(res.tag.bits, r);
    if (!fresh)
      spdlog::warn(
          "the resources of backends {} and {} have the same tag {}: ids of the second go to the first; "
          "give one of them another BACKEND_X_RESOURCE",
          cfg.backends[snap.resources[at->second].backends[0]].name, cfg.backends[res.backends[0]].name,
          res.tag.view());
    const auto on_r = [&snap, r](std::size_t b) { return snap.resource_of[b] == r; };
    res.rule = std::make_unique<Rule>(make_rule(backend_rule(cfg, "resource", on_r), backends_in, on_r));
  }
  snap.any_backend =
      std::make_unique<Rule>(make_rule(backend_rule(cfg, "any-backend", [](std::size_t) { return true; }),
                                       backends_in, [](std::size_t) { return true; }));
  for (std::size_t k = 0; k < snap.rules.size(); ++k) {
    Rule& rule = snap.rules[k];
    for (const RouteTarget& route : rule.route) rule.resource_at.push_back(snap.resource_of[route.backend]);
    rule.on_resource.resize(snap.resources.size());
    for (std::uint32_t r = 0; r < snap.resources.size(); ++r)
      if (std::find(rule.resource_at.begin(), rule.resource_at.end(), r) != rule.resource_at.end())
        rule.on_resource[r] = std::make_unique<Rule>(
            make_rule(rules[k], in, [&snap, r](std::size_t b) { return snap.resource_of[b] == r; }));
  }
}

}  // namespace

namespace {

// The clients' token issuers (CLIENT_ENTRA_*, then the file's), each with the keys published at
// its discovery URL; null when none is configured.
std::shared_ptr<const clients::jwt::TokenAuthenticator> token_authenticator(
    const config::Config& cfg, clients::jwt::KeySetService* key_sets) {
  std::vector<clients::jwt::TokenIssuer> issuers;
  for (const auto* list : {&cfg.client_token_issuers, &cfg.policy.token_issuers})
    for (const config::TokenIssuerConfig& t : *list) {
      const std::string authority =
          t.authority_host.empty() ? "https://login.microsoftonline.com" : t.authority_host;
      const std::string url =
          t.discovery_url.empty() ? clients::jwt::discovery_url_of(authority, t.tenant_id) : t.discovery_url;
      clients::jwt::IssuerRules rules{t.name, clients::jwt::tenant_issuers(authority, t.tenant_id),
                                      t.audiences, t.required_roles, t.clock_skew};
      auto keys = key_sets ? key_sets->keys_for(url) : std::make_shared<clients::jwt::IssuerKeys>(url);
      if (!key_sets) keys->fetch_failed("no key-set service");
      issuers.push_back({std::move(rules), std::move(keys)});
    }
  if (issuers.empty()) return nullptr;
  return std::make_shared<const clients::jwt::TokenAuthenticator>(std::move(issuers));
}

}  // namespace

std::shared_ptr<const Snapshot> make_snapshot(const config::Config& cfg, routing::BackendIds& ids,
                                              routing::LatencyStats* latency,
                                              credentials::entra::CredentialService* credentials,
                                              clients::BudgetRegistry* budgets,
                                              clients::jwt::KeySetService* key_sets) {
  auto snap = std::make_shared<Snapshot>();
  snap->backends = cfg.backends;
  std::vector<routing::PoolMember> members;
  std::unordered_map<std::string_view, std::size_t> backend_at;
  for (std::size_t i = 0; i < cfg.backends.size(); ++i) {
    members.push_back(backend_member(cfg, cfg.backends[i]));
    backend_at.emplace(cfg.backends[i].name, i);
  }
  snap->table = routing::RoutingTable(std::move(members), ids);
  snap->prepared = prepare(cfg, credentials);

  std::vector<config::TargetConfig> targets = cfg.policy.targets;
  const std::vector<config::RuleConfig> rules = rules_of(cfg, targets);
  RuleInputs in{cfg, ids, latency, {}, std::move(backend_at)};
  for (const auto& t : targets) in.target_by_id.emplace(t.id, &t);
  for (const config::RuleConfig& rc : rules) {
    snap->rules.push_back(make_rule(rc, in, [](std::size_t) { return true; }));
    snap->any_quota = snap->any_quota || snap->rules.back().table.any_quota();
  }
  add_resources(*snap, rules, in);

  std::vector<routing::RuleConditions> conditions;
  for (const Rule& r : snap->rules) conditions.push_back(r.when);
  snap->rule_index = routing::RuleIndex(conditions);

  std::vector<clients::ClientKey> keys = clients::ClientAuthenticator::from_key_list(cfg.client_api_keys);
  for (const config::ClientConfig& c : cfg.policy.clients)
    keys.push_back({c.name, c.key, c.subjects, c.key_sha256});
  snap->client_auth = clients::ClientAuthenticator(keys, token_authenticator(cfg, key_sets));
  if (budgets) snap->budgets = clients::BudgetPlan(cfg.policy, *budgets);
  snap->prices = cfg.policy.prices;
  snap->priority_classes = clients::PriorityClasses(cfg.policy.priority_classes);
  snap->config_hash = cfg.policy.hash;
  static std::atomic<std::uint64_t> generations{0};
  snap->generation = generations.fetch_add(1, std::memory_order_relaxed) + 1;
  return snap;
}

void SnapshotCache::refresh() {
  version_ = source_.version();  // read first: a publication racing this one is seen next time
  if (current_ && current_->users == 0) drop(current_);
  current_ = &entries_.emplace_back(Entry{source_.current(), 0});
}

void SnapshotCache::drop(Entry* e) {
  entries_.remove_if([e](const Entry& x) { return &x == e; });
}

}  // namespace smartlb::net
