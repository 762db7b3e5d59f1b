#include "smartlb/admin/prometheus_families.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <type_traits>
#include <utility>

#include "smartlb/admin/counter_labels.hpp"
#include "smartlb/base/version.hpp"

namespace smartlb::admin {

// One scrape's inputs, and the label values the families give their keys.
struct Scrape {
  const telemetry::MetricsSnapshot& m;
  const PoolSnapshot& p;

  // A backend id's label: its name in the pool, else the name the metrics knew it by (a backend
  // a reload removed); "none" for the answers smartlb gave itself.
  std::string backend(std::uint32_t b) const {
    if (b == telemetry::Metrics::kNoBackend) return "none";
    if (b < p.backends.size() && p.backends[b].present) return p.backends[b].name;
    if (b < m.backend_names.size()) return m.backend_names[b];
    return "backend-" + std::to_string(b);
  }
  // The label value of a deployment index of the metrics ("other" for the fold).
  std::string_view deployment(std::uint32_t d) const { return m.deployment_name(d); }
  // The label of a deployment the pool names: itself when the metrics label it, else the fold.
  std::string deployment_label(std::string_view name) const {
    return m.deployment_index(name) >= 0 ? std::string(name) : std::string("other");
  }
  // Calls fn(key, value) for each labelled counter of one kind.
  template <class Fn>
  void each(telemetry::CounterKind kind, Fn&& fn) const {
    for (const auto& [key, v] : m.counters)
      if (key.kind == kind) fn(key, v);
  }
};

namespace {

using Samples = PrometheusWriter::Samples;
using Type = MetricType;
using Shown = PrometheusFamily::Shown;

// Collectors shared by families of the same shape.

// One sample per backend the metrics know (by id), from a field of its BackendMetrics.
template <auto field>
void per_backend(const Scrape& s, Samples& out) {
  for (std::uint32_t b = 0; b < s.m.backends.size(); ++b) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(s.m.backends[b].*field)>,
                                 telemetry::HistogramSnapshot>)
      out.histogram({s.backend(b)}, s.m.backends[b].*field);
    else
      out.add({s.backend(b)}, s.m.backends[b].*field);
  }
}

// One sample per backend of the current configuration, from a field of the pool's backend.
template <auto field>
void per_configured_backend(const Scrape& s, Samples& out) {
  for (const std::uint32_t b : present_ids(s.p)) out.add({s.backend(b)}, s.p.backends[b].*field);
}

// One sample per client name, from a field of its ClientMetrics.
template <auto field>
void per_client(const Scrape& s, Samples& out) {
  for (const auto& c : s.m.clients) out.add({c.name}, c.*field);
}

// The labelled counters of one kind, by backend and deployment, and with `with_cause` by the
// FailureCause in their code.
template <telemetry::CounterKind kind, bool with_cause = false>
void per_backend_and_deployment(const Scrape& s, Samples& out) {
  s.each(kind, [&](const telemetry::CounterKey& k, std::uint64_t v) {
    if constexpr (with_cause)
      out.add({s.backend(k.backend), s.deployment(k.deployment), to_string(routing::FailureCause(k.code))},
              v);
    else
      out.add({s.backend(k.backend), s.deployment(k.deployment)}, v);
  });
}

// The collectors of one family each.

void upstream_responses(const Scrape& s, Samples& out) {
  s.each(telemetry::CounterKind::UpstreamResponses, [&](const telemetry::CounterKey& k, std::uint64_t v) {
    if (k.code >= telemetry::kUpstreamTransport)
      out.add({s.backend(k.backend), "transport", to_string(upstream_transport_cause(k.code))}, v);
    else
      out.add({s.backend(k.backend), upstream_code_label(k.code)}, v);
  });
}

void backend_states(const Scrape& s, Samples& out) {
  for (const std::uint32_t b : present_ids(s.p)) {
    const std::string_view state = backend_state(s.p.backends[b].cooldown, s.p.now);
    for (std::string_view each : {"available", "cooling", "unreachable", "auth_failed"})
      out.add({s.backend(b), each}, each == state ? 1 : 0);
  }
}

void deployment_cooldowns(const Scrape& s, Samples& out) {
  for (const std::uint32_t b : present_ids(s.p)) {
    std::map<std::string, std::int64_t> by_label;  // folded names keep the longest cooldown
    for (const auto& d : s.p.backends[b].deployments) {
      auto& slot = by_label[s.deployment_label(d.name)];
      slot = std::max(slot, cooldown_remaining_ms(d.cooldown, s.p.now));
    }
    for (const auto& [label, remaining] : by_label)
      out.add({s.backend(b), label}, static_cast<double>(remaining) / 1e3);
  }
}

void quota_used(const Scrape& s, Samples& out) {
  for (const std::uint32_t b : present_ids(s.p)) {
    // Per deployment, against the limits that apply to it (its target's or its backend's); a
    // negative share: no such limit. Folded names keep the highest share.
    std::map<std::string, std::pair<double, double>> by_label;
    for (const auto& d : s.p.backends[b].deployments) {
      const auto& q = d.quota;
      if (q.tokens_limit <= 0 && q.requests_limit <= 0) continue;
      auto& slot = by_label.try_emplace(s.deployment_label(d.name), -1.0, -1.0).first->second;
      if (q.tokens_limit > 0)
        slot.first = std::max(slot.first, double(q.tokens_used) / double(q.tokens_limit));
      if (q.requests_limit > 0)
        slot.second = std::max(slot.second, double(q.requests_used) / double(q.requests_limit));
    }
    for (const auto& [label, used] : by_label) {
      if (used.first >= 0) out.add({s.backend(b), label, "tokens"}, used.first);
      if (used.second >= 0) out.add({s.backend(b), label, "requests"}, used.second);
    }
  }
}

// Every family, in the order of the exposition: declaration, then where its samples come from.
constexpr PrometheusFamily kFamilies[] = {
    {{"smartlb_build_info", Type::Gauge, "Always 1; the version label is the smartlb version.", {"version"}},
     [](const Scrape&, Samples& out) { out.add({kVersion}, 1); }},
    {{"smartlb_ready", Type::Gauge, "1 while the API listener accepts requests, 0 while draining."},
     [](const Scrape& s, Samples& out) { out.add({}, s.p.ready && !s.p.draining ? 1 : 0); }},
    {{"smartlb_requests_in_flight", Type::Gauge, "Client requests being handled now."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.in_flight()); }},

    {{"smartlb_requests_total",
      Type::Counter,
      "Client requests by the backend that answered (none: smartlb answered itself), deployment and status "
      "code sent to the client (0: the client left first).",
      {"backend", "deployment", "code"}},
     [](const Scrape& s, Samples& out) {
       s.each(telemetry::CounterKind::Requests, [&](const telemetry::CounterKey& k, std::uint64_t v) {
         out.add({s.backend(k.backend), s.deployment(k.deployment), std::to_string(k.code)}, v);
       });
     }},
    {{"smartlb_client_throttled_total",
      Type::Counter,
      "429 answers sent to clients, by deployment and cause: upstream (every backend was rate limited) or "
      "client_limit (one of the client's budgets).",
      {"deployment", "cause"}},
     [](const Scrape& s, Samples& out) {
       s.each(telemetry::CounterKind::ClientThrottled, [&](const telemetry::CounterKey& k, std::uint64_t v) {
         out.add({s.deployment(k.deployment), k.code == 1 ? "client_limit" : "upstream"}, v);
       });
     }},
    {{"smartlb_client_requests_total",
      Type::Counter,
      "Requests by client (its configured name, never a key).",
      {"client"}},
     per_client<&telemetry::ClientMetrics::requests>},
    {{"smartlb_client_tokens_total",
      Type::Counter,
      "Tokens the answers to a client reported using, by client and kind (prompt, completion).",
      {"client", "kind"}},
     [](const Scrape& s, Samples& out) {
       for (const auto& c : s.m.clients) {
         out.add({c.name, "prompt"}, c.prompt_tokens);
         out.add({c.name, "completion"}, c.completion_tokens);
       }
     }},
    {{"smartlb_cost_total",
      Type::Counter,
      "What the answers cost by the config file's price table, in its currency (prices.currency, e.g. USD), "
      "by "
      "client, priced model (the price entry's name) and serving backend.",
      {"client", "model", "backend"}},
     [](const Scrape& s, Samples& out) {
       s.each(telemetry::CounterKind::Cost, [&](const telemetry::CounterKey& k, std::uint64_t pico) {
         const std::string_view client = k.code < s.m.clients.size()
                                             ? std::string_view(s.m.clients[k.code].name)
                                             : std::string_view("other");
         const std::string_view model = k.deployment < s.m.cost_models.size()
                                            ? std::string_view(s.m.cost_models[k.deployment])
                                            : std::string_view("other");
         out.add({client, model, s.backend(k.backend)},
                 cost::money_as_units(static_cast<cost::PicoUnits>(pico)));
       });
     }},
    {{"smartlb_client_auth_failures_total",
      Type::Counter,
      "Requests refused with 401 before their body was read, by reason (invalid_api_key, or why a token was "
      "refused: expired, wrong_audience, bad_signature, ...).",
      {"reason"}},
     [](const Scrape& s, Samples& out) {
       for (const auto& [reason, n] : s.m.auth_failures) out.add({reason}, n);
     }},
    {{"smartlb_priority_class_requests_total",
      Type::Counter,
      "Requests of a priority class below the first (docs/client-budgets.md), by class; the first class's "
      "are the rest of smartlb_requests_total.",
      {"class"}},
     [](const Scrape& s, Samples& out) {
       for (const auto& [name, c] : s.m.priority_classes) out.add({name}, c.requests);
     }},
    {{"smartlb_priority_class_throttled_total",
      Type::Counter,
      "Requests of a priority class below the first answered 429 (a reserve kept for the classes above, or "
      "every "
      "target throttled), by class.",
      {"class"}},
     [](const Scrape& s, Samples& out) {
       for (const auto& [name, c] : s.m.priority_classes) out.add({name}, c.throttled);
     }},
    {{"smartlb_queued_requests_total",
      Type::Counter,
      "Requests that waited for capacity (a priority class's max_queue_seconds), by class and how they "
      "ended: answered (anything but a 429), refused (a 429 after all), left (the client left before an "
      "answer).",
      {"class", "outcome"}},
     [](const Scrape& s, Samples& out) {
       for (const auto& [name, q] : s.m.queues) {
         out.add({name, "answered"}, q.answered);
         out.add({name, "refused"}, q.refused);
         out.add({name, "left"}, q.left);
       }
     }},
    {{"smartlb_queued_seconds_total",
      Type::Counter,
      "Seconds requests waited for capacity, in all, by class.",
      {"class"}},
     [](const Scrape& s, Samples& out) {
       for (const auto& [name, q] : s.m.queues) out.add({name}, q.seconds);
     }},
    {{"smartlb_client_limited_total",
      Type::Counter,
      "Requests a client's own budgets refused (429 rate_limit_exceeded; no backend was called).",
      {"client"}},
     per_client<&telemetry::ClientMetrics::limited>},
    // Budgets with a cap on requests in flight; a subject's budgets of single callers (up to
    // 10,000) are left to /status.
    {{"smartlb_budget_in_flight",
      Type::Gauge,
      "Requests being answered now, of a budget with max_in_flight (owner client, or subject shared).",
      {"owner", "name"}},
     [](const Scrape& s, Samples& out) {
       for (const BudgetStatus& b : s.p.budgets)
         if (b.limits.max_in_flight && b.principal.empty()) out.add({b.owner, b.name}, b.in_flight);
     }},
    {{"smartlb_budget_in_flight_all_replicas",
      Type::Gauge,
      "The same on every replica, as this one last learnt from Redis (the others fill max_in_flight "
      "at most; without Redis, this replica's).",
      {"owner", "name"}},
     [](const Scrape& s, Samples& out) {
       for (const BudgetStatus& b : s.p.budgets)
         if (b.limits.max_in_flight && b.principal.empty())
           out.add({b.owner, b.name}, b.in_flight_all_replicas);
     }},
    {{"smartlb_budget_max_in_flight",
      Type::Gauge,
      "A budget's max_in_flight (as smartlb_budget_in_flight).",
      {"owner", "name"}},
     [](const Scrape& s, Samples& out) {
       for (const BudgetStatus& b : s.p.budgets)
         if (b.limits.max_in_flight && b.principal.empty())
           out.add({b.owner, b.name}, b.limits.max_in_flight);
     }},
    {{"smartlb_client_aborted_total", Type::Counter,
      "Requests the client abandoned before the end of the response."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.client_aborted); }},
    {{"smartlb_config_reloads_total",
      Type::Counter,
      "Configuration reloads (SIGHUP, a change of the config file), by result: ok, or refused.",
      {"result"}},
     [](const Scrape& s, Samples& out) {
       out.add({"ok"}, s.m.reloads_ok);
       out.add({"refused"}, s.m.reloads_failed);
     }},
    {{"smartlb_config_last_reload_success_timestamp_seconds", Type::Gauge,
      "When a reload was last taken (Unix seconds; 0: none since start)."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.last_reload_success); }},

    {{"smartlb_request_attempts",
      Type::Histogram,
      "Backends tried per client request.",
      {},
      telemetry::kAttemptBuckets},
     [](const Scrape& s, Samples& out) { out.histogram({}, s.m.attempts); }},
    {{"smartlb_upstream_attempts_total",
      Type::Counter,
      "Requests sent to each backend (every attempt).",
      {"backend"}},
     per_backend<&telemetry::BackendMetrics::attempts>},
    {{"smartlb_upstream_responses_total",
      Type::Counter,
      "Attempts by backend and the status code of the response head (other: outside 100..599), or "
      "code=\"transport\" and the cause when no response head arrived.",
      {"backend", "code", "cause"}},
     upstream_responses},
    {{"smartlb_failovers_total",
      Type::Counter,
      "Attempts that failed over (another backend was tried, or none was left), by cause.",
      {"backend", "deployment", "cause"}},
     per_backend_and_deployment<telemetry::CounterKind::Failovers, true>},
    {{"smartlb_cooldowns_started_total",
      Type::Counter,
      "Cooldowns started (or extended) on a backend or (backend, deployment), by cause.",
      {"backend", "deployment", "cause"}},
     per_backend_and_deployment<telemetry::CounterKind::CooldownsStarted, true>},
    {{"smartlb_upstream_aborted_total",
      Type::Counter,
      "Responses cut off by the backend after their headers were relayed.",
      {"backend"}},
     per_backend<&telemetry::BackendMetrics::upstream_aborted>},
    {{"smartlb_dns_lookups_total",
      Type::Counter,
      "Host-name lookups for new backend connections (addresses are cached for 30 s), by result.",
      {"backend", "result"}},
     [](const Scrape& s, Samples& out) {
       for (std::uint32_t b = 0; b < s.m.backends.size(); ++b) {
         const auto& bm = s.m.backends[b];
         out.add({s.backend(b), "ok"}, bm.dns_lookups - bm.dns_failures);
         out.add({s.backend(b), "failed"}, bm.dns_failures);
       }
     }},
    {{"smartlb_credential_refreshes_total",
      Type::Counter,
      "Entra ID token requests of the backends with auth entra, by result (ok, failed).",
      {"backend", "result"}},
     [](const Scrape& s, Samples& out) {
       for (std::uint32_t b = 0; b < s.m.backends.size(); ++b) {
         if (b >= s.p.backends.size() || !s.p.backends[b].credential) continue;
         out.add({s.backend(b), "ok"}, s.m.backends[b].credential_refreshes_ok);
         out.add({s.backend(b), "failed"}, s.m.backends[b].credential_refreshes_failed);
       }
     }},

    {{"smartlb_backend_health_up",
      Type::Gauge,
      "Each backend's last health probe: 1 up (any answer under 500), 0 down. Absent while probes are off "
      "or none has ended.",
      {"backend"}},
     [](const Scrape& s, Samples& out) {
       for (std::uint32_t b = 0; b < s.p.backends.size(); ++b) {
         const auto& health = s.p.backends[b].health;
         if (!s.p.backends[b].present || (health.state != "up" && health.state != "down")) continue;
         out.add({s.backend(b)}, health.state == "up" ? 1 : 0);
       }
     }},
    {{"smartlb_health_probes_total",
      Type::Counter,
      "Health probe results applied on this replica, by source: probed (its own probe) or read (another "
      "replica's, when replicas take turns through Redis).",
      {"backend", "source"}},
     [](const Scrape& s, Samples& out) {
       for (std::uint32_t b = 0; b < s.p.backends.size(); ++b) {
         const auto& health = s.p.backends[b].health;
         if (!s.p.backends[b].present || health.state == "off") continue;
         out.add({s.backend(b), "probed"}, health.probes_sent);
         out.add({s.backend(b), "read"}, health.results_read);
       }
     }},
    {{"smartlb_backend_priority",
      Type::Gauge,
      "Configured priority group of each backend (lower is preferred).",
      {"backend"}},
     per_configured_backend<&PoolSnapshot::Backend::priority>},
    {{"smartlb_backend_weight",
      Type::Gauge,
      "Configured weight of each backend inside its priority group.",
      {"backend"}},
     per_configured_backend<&PoolSnapshot::Backend::weight>},
    {{"smartlb_backend_websocket_sessions",
      Type::Gauge,
      "Realtime WebSocket sessions open on each backend now.",
      {"backend"}},
     per_configured_backend<&PoolSnapshot::Backend::websocket_sessions>},
    {{"smartlb_backend_state",
      Type::Gauge,
      "1 for the backend's current state (available, cooling, unreachable, auth_failed), 0 for the others.",
      {"backend", "state"}},
     backend_states},
    {{"smartlb_backend_cooldown_remaining_seconds",
      Type::Gauge,
      "Seconds until a backend-wide cooldown ends (0: not cooling).",
      {"backend"}},
     [](const Scrape& s, Samples& out) {
       for (const std::uint32_t b : present_ids(s.p))
         out.add({s.backend(b)},
                 static_cast<double>(cooldown_remaining_ms(s.p.backends[b].cooldown, s.p.now)) / 1e3);
     }},
    {{"smartlb_deployment_cooldown_remaining_seconds",
      Type::Gauge,
      "Seconds until the cooldown of a (backend, deployment) ends (0: not cooling).",
      {"backend", "deployment"}},
     deployment_cooldowns},
    {{"smartlb_quota_used_ratio",
      Type::Gauge,
      "Share of a declared quota (BACKEND_X_TPM / BACKEND_X_RPM) used in the current window, by resource.",
      {"backend", "deployment", "resource"}},
     quota_used},

    {{"smartlb_request_duration_seconds",
      Type::Histogram,
      "Client request duration (head read to last byte relayed, failovers included), by the backend that "
      "served it.",
      {"backend"},
      telemetry::kDurationBuckets},
     per_backend<&telemetry::BackendMetrics::duration>},
    {{"smartlb_upstream_ttfb_seconds",
      Type::Histogram,
      "Time to first byte of each attempt: request sent to response header read.",
      {"backend"},
      telemetry::kTtfbBuckets},
     per_backend<&telemetry::BackendMetrics::ttfb>},

    {{"smartlb_prompt_tokens_total",
      Type::Counter,
      "Prompt (input) tokens reported in the usage of served responses.",
      {"backend", "deployment"}},
     per_backend_and_deployment<telemetry::CounterKind::PromptTokens>},
    {{"smartlb_completion_tokens_total",
      Type::Counter,
      "Completion (output) tokens reported in the usage of served responses.",
      {"backend", "deployment"}},
     per_backend_and_deployment<telemetry::CounterKind::CompletionTokens>},
    {{"smartlb_deployment_labels_folded_total", Type::Counter,
      "Requests whose deployment label was folded into \"other\" (more distinct deployments than the cap)."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.deployments_folded); }},

    // Scale-out through Redis (docs/scale-out.md): only with REDIS_URL set.
    {{"smartlb_redis_up", Type::Gauge, "1 while this replica is connected to Redis (cooldowns shared)."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.redis.up ? 1 : 0); },
     Shown::WithRedis},
    {{"smartlb_redis_errors_total", Type::Counter,
      "Failed Redis connection attempts, lost connections (timeouts included) and failed commands."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.redis.errors); },
     Shown::WithRedis},
    {{"smartlb_redis_command_duration_seconds",
      Type::Histogram,
      "Round trip of each Redis command.",
      {},
      telemetry::kRedisBuckets},
     [](const Scrape& s, Samples& out) { out.histogram({}, s.m.redis.commands); },
     Shown::WithRedis},
    {{"smartlb_replicas_live", Type::Gauge, "Replicas with a live heartbeat in Redis, this one included."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.redis.replicas_live); },
     Shown::WithRedis},
    {{"smartlb_quota_lease_asks_total",
      Type::Counter,
      "Asks for a slice of a shared quota: result full (all asked granted), short (less: the quota is spent "
      "for the sub-window), failed (no answer: Redis lost).",
      {"result"}},
     [](const Scrape& s, Samples& out) {
       out.add({"full"}, s.m.redis.leases_full);
       out.add({"short"}, s.m.redis.leases_short);
       out.add({"failed"}, s.m.redis.leases_failed);
     },
     Shown::WithRedis},
    {{"smartlb_quota_leased_total", Type::Counter,
      "Tokens (and requests, for request quotas) granted to this replica from shared quotas."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.redis.leased); },
     Shown::WithRedis},

    // Traces (docs/observability.md, "Traces"): only with an OTLP endpoint set.
    {{"smartlb_trace_spans_exported_total", Type::Counter, "Spans the OTLP collector accepted."},
     [](const Scrape& s, Samples& out) { out.add({}, s.m.tracing.exported); },
     Shown::WithTracing},
    {{"smartlb_trace_spans_dropped_total",
      Type::Counter,
      "Spans not exported: reason queue_full (the export queue was full), export_failed (the collector "
      "did not take their batch), shutdown (still queued when the flush on SIGTERM ran out of time).",
      {"reason"}},
     [](const Scrape& s, Samples& out) {
       out.add({"queue_full"}, s.m.tracing.dropped_queue_full);
       out.add({"export_failed"}, s.m.tracing.dropped_export_failed);
       out.add({"shutdown"}, s.m.tracing.dropped_shutdown);
     },
     Shown::WithTracing},
};

}  // namespace

std::span<const PrometheusFamily> prometheus_families() { return kFamilies; }

std::string render_prometheus(const telemetry::MetricsSnapshot& m, const PoolSnapshot& p) {
  const Scrape scrape{m, p};
  PrometheusWriter w;
  for (const PrometheusFamily& f : kFamilies) {
    if (f.shown == Shown::WithRedis && !m.redis.enabled) continue;
    if (f.shown == Shown::WithTracing && !m.tracing.enabled) continue;
    PrometheusWriter::Samples out = w.family(f.family);
    f.collect(scrape, out);
  }
  return w.take();
}

}  // namespace smartlb::admin
