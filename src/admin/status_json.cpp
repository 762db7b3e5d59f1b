#include "smartlb/admin/status_json.hpp"

#include <cmath>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "smartlb/admin/admin_api.hpp"
#include "smartlb/admin/counter_labels.hpp"
#include "smartlb/base/version.hpp"
#include "smartlb/config/rule_types.hpp"

namespace smartlb::admin {
namespace {

using nlohmann::json;

double ms(double seconds) { return std::round(seconds * 1e6) / 1e3; }

json histogram_json(const telemetry::HistogramSnapshot& h, std::span<const double> bounds) {
  json j;
  j["count"] = h.count;
  j["sum"] = ms(h.sum);
  j["avg"] = h.count ? ms(h.sum / static_cast<double>(h.count)) : 0.0;
  j["p50"] = ms(h.quantile(0.5, bounds.data(), bounds.size()));
  j["p95"] = ms(h.quantile(0.95, bounds.data(), bounds.size()));
  return j;
}

json string_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The labelled counters, summed the ways /status shows them.
struct CounterTotals {
  struct Deployment {
    std::uint64_t requests = 0, throttled = 0, failovers = 0, prompt = 0, completion = 0;
  };
  std::uint64_t client_throttled = 0, failovers = 0, answered_by_smartlb = 0;
  // By backend and deployment label: requests served, 429s, failovers, tokens.
  std::map<std::pair<std::uint32_t, std::string>, Deployment> deployments;
  // By backend: attempts by response code ("other", or "transport" for every cause).
  std::map<std::uint32_t, std::map<std::string, std::uint64_t>> responses;
};

CounterTotals sum_counters(const telemetry::MetricsSnapshot& m) {
  CounterTotals t;
  for (const auto& [k, v] : m.counters) {
    const std::pair<std::uint32_t, std::string> at{k.backend, std::string(m.deployment_name(k.deployment))};
    switch (k.kind) {
      case telemetry::CounterKind::Requests:
        if (k.backend == telemetry::Metrics::kNoBackend)
          t.answered_by_smartlb += v;
        else
          t.deployments[at].requests += v;
        break;
      case telemetry::CounterKind::Failovers:
        t.failovers += v;
        t.deployments[at].failovers += v;
        if (is_rate_limit(static_cast<routing::FailureCause>(k.code))) t.deployments[at].throttled += v;
        break;
      case telemetry::CounterKind::PromptTokens:
        t.deployments[at].prompt += v;
        break;
      case telemetry::CounterKind::CompletionTokens:
        t.deployments[at].completion += v;
        break;
      case telemetry::CounterKind::ClientThrottled:
        t.client_throttled += v;
        break;
      case telemetry::CounterKind::UpstreamResponses:
        t.responses[k.backend][upstream_code_label(k.code)] += v;
        break;
      case telemetry::CounterKind::CooldownsStarted:
      case telemetry::CounterKind::Cost:  // (its `deployment` is a price entry: /status shows cost in the
                                          // budgets)
        break;
    }
  }
  return t;
}

// A deployment's entry before anything is known of it.
json new_deployment(const std::string& name) {
  return {{"name", name},
          {"state", "available"},
          {"cooldown_remaining_ms", 0},
          {"cooldown_cause", nullptr},
          {"requests", 0},
          {"throttled", 0},
          {"failovers", 0},
          {"prompt_tokens", 0},
          {"completion_tokens", 0}};
}

// The limits declared (a limit not declared is left out, not shown as 0).
json declared_limits(std::int64_t tokens, std::int64_t requests) {
  json q = json::object();
  if (tokens > 0) q["tokens_per_window"] = tokens;
  if (requests > 0) q["requests_per_window"] = requests;
  return q;
}

// What the pool holds of a deployment: its quota, this replica's lease, its cooldown.
void add_pool_state(json& j, const PoolSnapshot::Deployment& d, base::MonoNanos now) {
  if (d.quota.tokens_limit > 0 || d.quota.requests_limit > 0) {
    j["quota_used"] = {{"tokens", d.quota.tokens_used}, {"requests", d.quota.requests_used}};
    // The limits that apply to this deployment: its target's (model_configs) or its backend's.
    j["quota"] = declared_limits(d.quota.tokens_limit, d.quota.requests_limit);
  }
  // Shared quotas: this replica's lease of the current sub-window.
  for (const auto& [key, view] :
       {std::pair{"tokens", d.lease.tokens}, std::pair{"requests", d.lease.requests}})
    if (view) {
      json& l = j["lease"][key];
      l = {{"shared", view->shared},
           {"subwindow", view->subwindow},
           {"leased", view->leased},
           {"taken", view->taken},
           {"next_leased", view->next_leased}};
      if (view->counted >= 0) l["counted_all_replicas"] = view->counted;
    }
  if (is_cooling(d.cooldown, now)) {
    j["state"] = "cooling";
    j["cooldown_remaining_ms"] = cooldown_remaining_ms(d.cooldown, now);
    j["cooldown_cause"] = to_string(d.cooldown.cause);
  }
}

// A backend's deployments: those with cooldown state in the pool (while labelled or cooling, at
// most Metrics::kMaxDeployments), and those with traffic here. Sets "cooling_deployments" too.
void add_deployments(json& jb, const telemetry::MetricsSnapshot& m, const PoolSnapshot& p, std::uint32_t b,
                     const CounterTotals& totals) {
  std::map<std::string, json> deps;
  const auto entry = [&](const std::string& name) -> json& {
    json& d = deps[name];
    if (d.is_null()) d = new_deployment(name);
    return d;
  };
  std::size_t cooling_deployments = 0;
  for (const auto& d : p.backends[b].deployments) {
    if (!is_cooling(d.cooldown, p.now) && m.deployment_index(d.name) < 0) continue;  // stale, unlabelled
    if (deps.size() >= telemetry::Metrics::kMaxDeployments && !deps.count(d.name)) continue;
    add_pool_state(entry(d.name), d, p.now);
    if (is_cooling(d.cooldown, p.now)) ++cooling_deployments;
  }
  const auto& per_dep = totals.deployments;
  for (auto it = per_dep.lower_bound({b, std::string()}); it != per_dep.end() && it->first.first == b; ++it) {
    if (it->first.second.empty()) continue;  // no deployment in the path (/v1/...)
    json& j = entry(it->first.second);
    j["requests"] = it->second.requests;
    j["throttled"] = it->second.throttled;
    j["failovers"] = it->second.failovers;
    j["prompt_tokens"] = it->second.prompt;
    j["completion_tokens"] = it->second.completion;
  }
  json jd = json::array();
  for (auto& [name, d] : deps) jd.push_back(std::move(d));
  jb["deployments"] = std::move(jd);
  jb["cooling_deployments"] = cooling_deployments;
}

json credential_json(const PoolSnapshot::Backend::Credential& c, const telemetry::BackendMetrics& bm) {
  return {{"source", c.source},
          {"name", c.name},
          {"state", c.state},
          {"expires_at", c.expires_at_unix ? json(c.expires_at_unix) : json(nullptr)},
          {"last_error", string_or_null(c.last_error)},
          {"refreshes_ok", bm.credential_refreshes_ok},
          {"refreshes_failed", bm.credential_refreshes_failed}};
}

json last_error_json(const telemetry::LastError& e, base::MonoNanos now) {
  if (e.at == 0) return nullptr;
  return {{"cause", to_string(e.cause)},
          {"status", e.status},
          {"deployment", e.deployment},
          {"ago_ms", now > e.at ? (now - e.at) / 1'000'000 : 0}};
}

json backend_json(const telemetry::MetricsSnapshot& m, const PoolSnapshot& p, std::uint32_t b,
                  const CounterTotals& totals) {
  const auto& pb = p.backends[b];
  const telemetry::BackendMetrics bm = b < m.backends.size() ? m.backends[b] : telemetry::BackendMetrics{};
  json jb;
  jb["index"] = b;
  jb["name"] = pb.name;
  jb["url_host"] = pb.url_host;
  jb["scheme"] = pb.tls ? "https" : "http";
  jb["priority"] = pb.priority;
  jb["weight"] = pb.weight;
  if (!pb.deployment_override.empty()) jb["deployment_override"] = pb.deployment_override;
  jb["state"] = backend_state(pb.cooldown, p.now);
  jb["cooldown_remaining_ms"] = cooldown_remaining_ms(pb.cooldown, p.now);
  jb["cooldown_cause"] = is_cooling(pb.cooldown, p.now) ? json(to_string(pb.cooldown.cause)) : json(nullptr);
  // What operators set (docs/operations.md): the whole backend's phase, and every scope out.
  jb["admin_state"] = "enabled";
  json admin = json::array();
  for (const auto& v : pb.admin) {
    json scope = admin_scope_json(pb.name, v, p.now_unix_ms, p.now);
    if (!v.deployment) jb["admin_state"] = scope["state"];
    admin.push_back(std::move(scope));
  }
  jb["admin"] = std::move(admin);
  if (pb.quota_window_ms > 0) {
    jb["quota"] = declared_limits(pb.quota_tokens, pb.quota_requests);
    jb["quota"]["window_ms"] = pb.quota_window_ms;
  }
  add_deployments(jb, m, p, b, totals);
  jb["websocket_sessions"] = pb.websocket_sessions;
  jb["requests"] = bm.served;
  jb["attempts"] = bm.attempts;
  jb["errors"] = bm.errors;
  jb["throttled"] = bm.throttled;
  jb["upstream_aborted"] = bm.upstream_aborted;
  jb["dns_lookups"] = bm.dns_lookups;
  jb["dns_failures"] = bm.dns_failures;
  if (pb.credential) jb["credential"] = credential_json(*pb.credential, bm);
  jb["health"] = {{"state", pb.health.state},
                  {"status", pb.health.status ? json(pb.health.status) : json(nullptr)},
                  {"detail", string_or_null(pb.health.detail)},
                  {"last_at", pb.health.last_unix_ms ? json(pb.health.last_unix_ms) : json(nullptr)},
                  {"probed_by", string_or_null(pb.health.by)},
                  {"probes_sent", pb.health.probes_sent},
                  {"results_read", pb.health.results_read}};
  json jr = json::object();
  if (auto it = totals.responses.find(b); it != totals.responses.end())
    for (const auto& [code, n] : it->second) jr[code] = n;
  jb["responses"] = std::move(jr);
  jb["last_error"] = last_error_json(bm.last_error, p.now);
  jb["prompt_tokens"] = bm.prompt_tokens;
  jb["completion_tokens"] = bm.completion_tokens;
  jb["latency_ms"] = histogram_json(bm.duration, telemetry::kDurationBuckets);
  jb["ttfb_ms"] = histogram_json(bm.ttfb, telemetry::kTtfbBuckets);
  return jb;
}

json rule_json(const RuleStatus& r) {
  json jr;
  jr["id"] = r.id;
  const config::RuleTypeInfo& type = rule_type_info(r.type);
  jr["type"] = type.name;
  // What the page shows beside each target: the settings this type routes by.
  json settings = json::array();
  if (type.reads_priority) settings.push_back("priority");
  if (type.reads_weight) settings.push_back("weight");
  jr["target_settings"] = std::move(settings);
  jr["implicit"] = r.implicit;
  json when = json::object();
  if (!r.subjects.empty()) when["subjects"] = r.subjects;
  if (!r.models.empty()) when["models"] = r.models;
  if (!r.metadata.empty()) {
    json md = json::object();
    for (const auto& [k, v] : r.metadata) md[k] = v;
    when["metadata"] = md;
  }
  jr["when"] = when;
  json targets = json::array();
  for (const auto& t : r.targets) {
    json jt = {
        {"id", t.id},         {"backend", t.backend}, {"priority", t.priority},
        {"weight", t.weight}, {"state", t.state},     {"cooldown_remaining_ms", t.cooldown_remaining_ms}};
    jt["upstream_name"] = string_or_null(t.upstream_name);
    if (type.reads_latency)
      jt["latency"] = {{"ms_per_token", t.latency_ms_per_token}, {"samples", t.latency_samples}};
    targets.push_back(std::move(jt));
  }
  jr["targets"] = std::move(targets);
  return jr;
}

json budget_json(const BudgetStatus& b, const std::string& currency) {
  json limits = json::object(), used = json::object();
  const auto dimension = [&](const char* name, std::int64_t limit, std::int64_t value) {
    if (limit) limits[name] = limit;
    used[name] = value;
  };
  dimension("tokens_per_minute", b.limits.tokens_per_minute, b.tokens_minute);
  dimension("requests_per_minute", b.limits.requests_per_minute, b.requests_minute);
  dimension("tokens_per_day", b.limits.tokens_per_day, b.tokens_day);
  dimension("tokens_per_month", b.limits.tokens_per_month, b.tokens_month);
  dimension("max_in_flight", b.limits.max_in_flight, b.in_flight);
  // Cost limits in the prices' currency, only where set (a budget of tokens says nothing of money).
  for (auto [name, limit, value] : {std::tuple{"cost_per_day", b.limits.cost_per_day, b.cost_day},
                                    std::tuple{"cost_per_month", b.limits.cost_per_month, b.cost_month}})
    if (limit) {
      limits[name] = cost::money_as_units(limit);
      used[name] = cost::money_as_units(value);
    }
  json jb = {{"owner", b.owner}, {"name", b.name}, {"limits", limits}, {"used", used}};
  if (b.limits.cost_per_day || b.limits.cost_per_month) jb["currency"] = currency;
  if (!b.principal.empty()) jb["caller"] = b.principal;
  if (b.limits.max_in_flight) jb["in_flight_all_replicas"] = b.in_flight_all_replicas;
  return jb;
}

}  // namespace

nlohmann::json redis_json(const redis::RedisStatus& r) {
  json replicas = json::array();
  for (const auto& x : r.replicas)
    replicas.push_back(
        {{"id", x.id}, {"host", x.host}, {"started_ms", x.started_ms}, {"expires_ms", x.expires_ms}});
  return {{"url", r.url},
          {"replica_id", r.replica_id},
          {"up", r.up},
          {"up_since_ms", r.up_since_ms},
          {"last_error", string_or_null(r.last_error)},
          {"last_error_ms", r.last_error_ms},
          {"replicas", std::move(replicas)}};
}

nlohmann::json build_status(const telemetry::MetricsSnapshot& m, const PoolSnapshot& p) {
  json doc;
  doc["version"] = kVersion;
  doc["ready"] = p.ready && !p.draining;
  doc["draining"] = p.draining;
  doc["uptime_s"] = p.started > 0 && p.now > p.started ? (p.now - p.started) / 1'000'000'000 : 0;
  doc["in_flight"] = m.in_flight();
  doc["requests"] = m.finished;
  doc["client_aborted"] = m.client_aborted;
  const CounterTotals totals = sum_counters(m);
  doc["client_throttled"] = totals.client_throttled;
  doc["answered_by_smartlb"] = totals.answered_by_smartlb;
  doc["failovers"] = totals.failovers;

  std::uint64_t prompt = 0, completion = 0;
  json backends = json::array();
  for (const std::uint32_t b : present_ids(p)) {
    if (b < m.backends.size()) {
      prompt += m.backends[b].prompt_tokens;
      completion += m.backends[b].completion_tokens;
    }
    backends.push_back(backend_json(m, p, b, totals));
  }
  doc["prompt_tokens"] = prompt;
  doc["completion_tokens"] = completion;
  doc["backends"] = std::move(backends);

  json rules = json::array();
  for (const RuleStatus& r : p.rules) rules.push_back(rule_json(r));
  doc["config"] = {{"hash", string_or_null(p.config_hash)}, {"rules", std::move(rules)}};
  json budgets = json::array();
  for (const BudgetStatus& b : p.budgets) budgets.push_back(budget_json(b, p.currency));
  doc["budgets"] = std::move(budgets);
  if (p.redis) doc["redis"] = redis_json(*p.redis);
  return doc;
}

}  // namespace smartlb::admin
