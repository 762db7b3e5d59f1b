// What a configuration routes, in words (smartlb --check-config, and the start and reload lines).
#include <sstream>
#include <utility>
#include <vector>

#include "file_sections.hpp"
#include "smartlb/config/config_file.hpp"
#include "smartlb/config/rule_types.hpp"

namespace smartlb::config {
namespace {

// The name a rule's target is called with: its deployment or model, else the client's own
// (the rule's one model when it names exactly one).
std::string called_as(const RuleConfig& rule, const TargetConfig* t) {
  if (t && !t->upstream_name.empty()) return t->upstream_name;
  if (rule.models.size() == 1) return rule.models[0];
  return "the requested name";
}

void describe_rule(std::ostream& out, const Config& cfg, const RuleConfig& rule) {
  out << "  rule " << rule.id << (rule.implicit ? " (implicit)" : "") << ": "
      << rule_type_info(rule.type).name;
  if (rule.subjects.empty() && rule.models.empty() && rule.metadata.empty()) out << ", every request";
  for (const auto& s : rule.subjects) out << ", subject " << s;
  for (const auto& m : rule.models) out << ", model " << m;
  for (const auto& [k, v] : rule.metadata) out << ", metadata " << k << "=" << v;
  if (rule.affinity)
    out << ", affinity" << (rule.affinity_header.empty() ? "" : " on " + rule.affinity_header);
  if (rule.slow_start.count()) out << ", slow start " << rule.slow_start.count() << " s";
  out << "\n";
  for (const auto& rt : rule.targets) {
    const TargetConfig* t = file::find_target(cfg, rt.target);
    out << "    -> " << rt.target;
    if (t) out << " (as " << called_as(rule, t) << " on " << t->backend << ")";
    if (rule.type == RuleType::Priority) out << " priority " << rt.priority;
    if (rule.type != RuleType::Latency) out << " weight " << rt.weight;
    if (!rt.override_params.empty()) out << ", " << rt.override_params.size() << " override(s)";
    if (t && (t->tpm || t->rpm)) out << ", quota " << t->tpm << " TPM / " << t->rpm << " RPM";
    if (t && t->allowed_failures_per_minute)
      out << ", breaker after " << *t->allowed_failures_per_minute << " failures/min";
    const auto statuses = [&](const std::vector<unsigned>& codes) {
      for (std::size_t i = 0; i < codes.size(); ++i) out << (i ? "," : "") << codes[i];
    };
    if (rt.retry) {
      out << ", retried " << rt.retry->attempts << "x after " << rt.retry->delay.count() << " ms on ";
      statuses(rt.retry->on_status);
    }
    if (rt.fallback_status) {
      out << ", falls back on ";
      statuses(*rt.fallback_status);
    }
    if (!rt.fallback_candidate) out << ", never a fallback";
    out << "\n";
  }
}

// Who may call: keys, Entra ID tokens and their issuers.
void describe_callers(std::ostream& out, const Config& cfg) {
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
}

std::string limits_text(const ClientLimits& l, std::string_view cfg_currency) {
  std::string t;
  const auto add = [&](std::int64_t v, const char* what) {
    if (v) t += (t.empty() ? "" : ", ") + std::to_string(v) + " " + what;
  };
  add(l.tokens_per_minute, "tokens/min");
  add(l.requests_per_minute, "requests/min");
  add(l.tokens_per_day, "tokens/day");
  add(l.tokens_per_month, "tokens/month");
  add(l.max_in_flight, "in flight");
  for (auto [v, what] : {std::pair{l.cost_per_day, "/day"}, std::pair{l.cost_per_month, "/month"}})
    if (v) t += (t.empty() ? "" : ", ") + cost::format_money(v) + " " + std::string(cfg_currency) + what;
  return t;
}

void describe_budgets(std::ostream& out, const Config& cfg) {
  for (const auto& c : cfg.policy.clients)
    if (c.limits.any())
      out << "  budget of client " << c.name << ": " << limits_text(c.limits, cfg.policy.prices.currency)
          << "\n";
  for (const auto& s : cfg.policy.subject_limits)
    out << "  budget of " << (s.subject == "*" ? std::string("every caller") : "subject " + s.subject)
        << (s.shared           ? " (shared)"
            : s.subject == "*" ? " (each its own)"
                               : " (each caller its own)")
        << ": " << limits_text(s.limits, cfg.policy.prices.currency) << "\n";
  for (const auto& c : cfg.policy.priority_classes) {
    out << "  priority class " << c.name;
    if (c.reserve_permille > 0) {
      out << ": leaves the classes above what they ask for, up to " << c.reserve_permille / 10;
      if (c.reserve_permille % 10) out << '.' << c.reserve_permille % 10;
      out << " % of each quota";
    }
    if (c.max_queue.count() > 0)
      out << (c.reserve_permille > 0 ? "; " : ": ") << "waits up to " << c.max_queue.count() / 1000.0
          << " s for capacity (at most " << c.max_queue_length << " at once)";
    const char* sep = "; callers: ";
    for (const auto& n : c.clients) out << std::exchange(sep, ", ") << "client " << n;
    for (const auto& n : c.subjects) out << std::exchange(sep, ", ") << "subject " << n;
    out << "\n";
  }
}

void describe_prices(std::ostream& out, const Config& cfg) {
  const cost::PriceTable& prices = cfg.policy.prices;
  // Per token in pico-units is per million tokens in micro-units: x 10^6 is per million in pico.
  const auto per_million = [&](cost::PicoUnits p) {
    return cost::format_money(p * 1'000'000) + " " + prices.currency;
  };
  for (const cost::ModelPrice& m : prices.models) {
    out << "  price of " << m.model;
    for (std::size_t i = 0; i < m.aliases.size(); ++i) out << (i ? ", " : " (also ") << m.aliases[i];
    out << (m.aliases.empty() ? "" : ")") << " per 1M tokens: input " << per_million(m.input)
        << ", cached input " << per_million(m.cached_input) << ", output " << per_million(m.output) << "\n";
  }
}

}  // namespace

std::string describe_source(const Config& cfg) {
  std::string out = std::to_string(cfg.backends.size()) + " backend(s), " +
                    std::to_string(cfg.policy.rules.size()) + " rule(s)";
  if (!cfg.policy.file.empty())
    out += " from " + cfg.policy.file + " (sha256 " + cfg.policy.hash.substr(0, 12) + ")";
  return out;
}

std::string describe_routing(const Config& cfg) {
  std::ostringstream out;
  out << describe_source(cfg) << "\n";
  for (const auto& b : cfg.backends)
    out << "  backend " << b.name << ": " << (b.url.tls ? "https" : "http") << "://" << b.url.host_header
        << b.url.base_path << (b.api_key.empty() ? " (client credentials pass through)" : "") << "\n";
  for (const auto& rule : cfg.policy.rules) describe_rule(out, cfg, rule);
  describe_callers(out, cfg);
  describe_budgets(out, cfg);
  describe_prices(out, cfg);
  if (cfg.redis.enabled())
    out << "  shared through Redis: " << cfg.redis.url->redacted() << " (prefix " << cfg.redis.key_prefix
        << ", replica " << cfg.redis.replica_id << ")\n";
  return out.str();
}

}  // namespace smartlb::config
