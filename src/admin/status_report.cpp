#include "smartlb/admin/status_report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "smartlb/base/version.hpp"

namespace smartlb {
namespace {

constexpr std::uint32_t kNone = Metrics::kNoBackend;
constexpr std::uint32_t kOtherLabel = static_cast<std::uint32_t>(Metrics::kMaxDeployments);

bool cooling(const CooldownView& c, MonoNanos now) { return c.until > now; }

std::string format_double(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Builds the exposition text one family at a time.
class TextWriter {
 public:
  using Labels = std::vector<std::pair<std::string_view, std::string>>;

  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void sample(std::string_view name, const Labels& labels, std::string_view value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      bool first = true;
      for (const auto& [k, v] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += k;
        out_ += "=\"";
        out_ += escape_label_value(v);
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  void sample(std::string_view name, const Labels& labels, std::uint64_t v) {
    sample(name, labels, std::to_string(v));
  }
  void sample(std::string_view name, const Labels& labels, double v) {
    sample(name, labels, format_double(v));
  }

  void histogram(std::string_view name, const Labels& labels, const HistogramSnapshot& h,
                 const double* bounds, std::size_t n_bounds) {
    const std::string bucket = std::string(name) + "_bucket";
    std::uint64_t cumulative = 0;
    Labels with_le = labels;
    with_le.emplace_back("le", "");
    for (std::size_t i = 0; i <= n_bounds; ++i) {
      cumulative += i < h.buckets.size() ? h.buckets[i] : 0;
      with_le.back().second = i < n_bounds ? format_double(bounds[i]) : "+Inf";
      sample(bucket, with_le, cumulative);
    }
    sample(std::string(name) + "_sum", labels, h.sum);
    sample(std::string(name) + "_count", labels, cumulative);
  }

  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// The ids of the backends in the current configuration (PoolSnapshot::backends is by id, with
// gaps for backends a reload removed).
std::vector<std::uint32_t> present_ids(const PoolSnapshot& p) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t b = 0; b < p.backends.size(); ++b)
    if (p.backends[b].present) out.push_back(b);
  return out;
}

std::string backend_label(const MetricsSnapshot& m, const PoolSnapshot& p, std::uint32_t b) {
  if (b == kNone) return "none";
  if (b < p.backends.size() && p.backends[b].present) return p.backends[b].name;
  if (b < m.backend_names.size()) return m.backend_names[b];
  return "backend-" + std::to_string(b);
}

// The deployment's label in the metrics table, or the fold.
std::string deployment_label(const MetricsSnapshot& m, std::string_view name) {
  return m.deployment_index(name) >= 0 ? std::string(name) : std::string("other");
}

// The `code` label of an UpstreamResponses counter that is not a transport failure.
std::string response_code(std::uint32_t code) {
  return code == kUpstreamOtherStatus ? std::string("other") : std::to_string(code);
}

double ms(double seconds) { return std::round(seconds * 1e6) / 1e3; }

nlohmann::json histogram_json(const HistogramSnapshot& h, const double* bounds, std::size_t n) {
  nlohmann::json j;
  j["count"] = h.count;
  j["sum"] = ms(h.sum);
  j["avg"] = h.count ? ms(h.sum / static_cast<double>(h.count)) : 0.0;
  j["p50"] = ms(h.quantile(0.5, bounds, n));
  j["p95"] = ms(h.quantile(0.95, bounds, n));
  return j;
}

}  // namespace

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  const auto* s = reinterpret_cast<const unsigned char*>(v.data());
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c == '\\') {
      out += "\\\\";
      ++i;
      continue;
    }
    if (c == '"') {
      out += "\\\"";
      ++i;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is kept; anything else becomes '?'.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80)
        ok = false;
      else
        cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (ok) {
      const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
      ok = cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (ok) {
      out.append(v.substr(i, len));
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

namespace {

// The member whose declared quota applies to `deployment` (a state key) of backend `m`: a rule's
// target on that backend that declares one and serves that deployment (renamed to it, or
// passing any name), else the backend's own member.
const PoolMember& quota_member(const PoolMember& m, std::string_view deployment,
                               std::span<const RoutingTable* const> rule_tables) {
  for (const RoutingTable* t : rule_tables)
    for (const PoolMember& r : t->members())
      if (r.id == m.id && r.has_quota() &&
          (r.deployment_override.empty() || r.deployment_override == deployment))
        return r;
  return m;
}

}  // namespace

PoolSnapshot snapshot_pool(const RoutingTable& table, const BackendStates& states,
                           std::span<const BackendConfig> backends,
                           std::span<const RoutingTable* const> rule_tables) {
  PoolSnapshot p;
  p.now = states.clock().now();
  p.backends.resize(table.id_bound());
  for (auto& b : p.backends) b.present = false;
  for (std::size_t i = 0; i < table.size(); ++i) {
    PoolSnapshot::Backend b;
    const PoolMember& m = table.member(i);
    b.name = m.name;
    b.priority = m.priority;
    b.weight = m.weight;
    b.deployment_override = m.deployment_override;
    if (i < backends.size()) {
      b.url_host = backends[i].url.host_header;
      b.tls = backends[i].url.tls;
    }
    b.cooldown = states.backend_cooldown(m.id);
    for (auto& [name, view] : states.deployment_cooldowns(m.id)) {
      const PoolMember& q = quota_member(m, name, rule_tables);
      b.deployments.push_back({name, view, states.quota_usage(q, name), states.leases(q, name)});
    }
    if (m.has_quota()) {
      b.quota_tokens = m.tokens_per_window;
      b.quota_requests = m.requests_per_window;
      b.quota_window_ms = std::chrono::duration_cast<std::chrono::milliseconds>(m.quota_window).count();
    }
    p.backends[m.id.value] = std::move(b);
  }
  return p;
}

std::string_view backend_state(const CooldownView& c, MonoNanos now) {
  if (!cooling(c, now)) return "available";
  switch (c.cause) {
    case FailureCause::AuthRejected:
    case FailureCause::Credential:  // no Entra ID token could be had
      return "auth_failed";
    case FailureCause::ConnectFailed:
    case FailureCause::TlsFailed:
      return "unreachable";
    default:
      return "cooling";
  }
}

std::int64_t cooldown_remaining_ms(const CooldownView& c, MonoNanos now) {
  if (!cooling(c, now)) return 0;
  return (c.until - now + 999'999) / 1'000'000;
}

// Scale-out through Redis (docs/scale-out.md): only with REDIS_URL set.
static void render_redis(TextWriter& w, const RedisMetrics& r) {
  using L = TextWriter::Labels;
  w.family("smartlb_redis_up", "gauge", "1 while this replica is connected to Redis (cooldowns shared).");
  w.sample("smartlb_redis_up", L{}, std::uint64_t{r.up ? 1u : 0u});
  w.family("smartlb_redis_errors_total", "counter",
           "Failed Redis connection attempts, lost connections (timeouts included) and failed commands.");
  w.sample("smartlb_redis_errors_total", L{}, r.errors);
  w.family("smartlb_redis_command_duration_seconds", "histogram", "Round trip of each Redis command.");
  w.histogram("smartlb_redis_command_duration_seconds", L{}, r.commands, kRedisBuckets.data(),
              kRedisBuckets.size());
  w.family("smartlb_replicas_live", "gauge", "Replicas with a live heartbeat in Redis, this one included.");
  w.sample("smartlb_replicas_live", L{}, r.replicas_live);
  w.family("smartlb_quota_lease_asks_total", "counter",
           "Asks for a slice of a shared quota: result full (all asked granted), short (less: the quota is "
           "spent for the sub-window), failed (no answer: Redis lost).");
  w.sample("smartlb_quota_lease_asks_total", L{{"result", "full"}}, r.leases_full);
  w.sample("smartlb_quota_lease_asks_total", L{{"result", "short"}}, r.leases_short);
  w.sample("smartlb_quota_lease_asks_total", L{{"result", "failed"}}, r.leases_failed);
  w.family("smartlb_quota_leased_total", "counter",
           "Tokens (and requests, for request quotas) granted to this replica from shared quotas.");
  w.sample("smartlb_quota_leased_total", L{}, r.leased);
}

std::string render_prometheus(const MetricsSnapshot& m, const PoolSnapshot& p) {
  TextWriter w;
  using L = TextWriter::Labels;
  const auto be = [&](std::uint32_t b) { return backend_label(m, p, b); };
  const auto dep = [&](std::uint32_t d) { return std::string(m.deployment_name(d)); };
  const auto each = [&](CounterKind k, auto&& fn) {
    for (const auto& [key, v] : m.counters)
      if (key.kind == k) fn(key, v);
  };

  w.family("smartlb_build_info", "gauge", "Always 1; the version label is the smartlb version.");
  w.sample("smartlb_build_info", L{{"version", kVersion}}, std::uint64_t{1});
  w.family("smartlb_ready", "gauge", "1 while the API listener accepts requests, 0 while draining.");
  w.sample("smartlb_ready", L{}, std::uint64_t{p.ready && !p.draining ? 1u : 0u});
  w.family("smartlb_requests_in_flight", "gauge", "Client requests being handled now.");
  w.sample("smartlb_requests_in_flight", L{}, m.in_flight());

  w.family("smartlb_requests_total", "counter",
           "Client requests by the backend that answered (none: smartlb answered itself), "
           "deployment and status code sent to the client (0: the client left first).");
  each(CounterKind::Requests, [&](const CounterKey& k, std::uint64_t v) {
    w.sample(
        "smartlb_requests_total",
        L{{"backend", be(k.backend)}, {"deployment", dep(k.deployment)}, {"code", std::to_string(k.code)}},
        v);
  });
  w.family("smartlb_client_throttled_total", "counter",
           "429 answers sent to clients, by deployment and cause: upstream (every backend was rate "
           "limited) or client_limit (one of the client's budgets).");
  each(CounterKind::ClientThrottled, [&](const CounterKey& k, std::uint64_t v) {
    w.sample("smartlb_client_throttled_total",
             L{{"deployment", dep(k.deployment)}, {"cause", k.code == 1 ? "client_limit" : "upstream"}}, v);
  });
  w.family("smartlb_client_requests_total", "counter",
           "Requests by client (its configured name, never a key).");
  for (const auto& c : m.clients)
    w.sample("smartlb_client_requests_total", L{{"client", c.name}}, c.requests);
  w.family("smartlb_client_tokens_total", "counter",
           "Tokens the answers to a client reported using, by client and kind (prompt, completion).");
  for (const auto& c : m.clients) {
    w.sample("smartlb_client_tokens_total", L{{"client", c.name}, {"kind", "prompt"}}, c.prompt_tokens);
    w.sample("smartlb_client_tokens_total", L{{"client", c.name}, {"kind", "completion"}},
             c.completion_tokens);
  }
  w.family("smartlb_client_auth_failures_total", "counter",
           "Requests refused with 401 before their body was read, by reason (invalid_api_key, or why a "
           "token was refused: expired, wrong_audience, bad_signature, ...).");
  for (const auto& [reason, n] : m.auth_failures)
    w.sample("smartlb_client_auth_failures_total", L{{"reason", reason}}, n);
  w.family("smartlb_client_limited_total", "counter",
           "Requests a client's own budgets refused (429 rate_limit_exceeded; no backend was called).");
  for (const auto& c : m.clients) w.sample("smartlb_client_limited_total", L{{"client", c.name}}, c.limited);
  w.family("smartlb_client_aborted_total", "counter",
           "Requests the client abandoned before the end of the response.");
  w.sample("smartlb_client_aborted_total", L{}, m.client_aborted);
  w.family("smartlb_config_reloads_total", "counter",
           "Configuration reloads (SIGHUP, a change of the config file), by result: ok, or refused.");
  w.sample("smartlb_config_reloads_total", L{{"result", "ok"}}, m.reloads_ok);
  w.sample("smartlb_config_reloads_total", L{{"result", "refused"}}, m.reloads_failed);
  w.family("smartlb_config_last_reload_success_timestamp_seconds", "gauge",
           "When a reload was last taken (Unix seconds; 0: none since start).");
  w.sample("smartlb_config_last_reload_success_timestamp_seconds", L{}, m.last_reload_success);

  w.family("smartlb_request_attempts", "histogram", "Backends tried per client request.");
  w.histogram("smartlb_request_attempts", L{}, m.attempts, kAttemptBuckets.data(), kAttemptBuckets.size());

  w.family("smartlb_upstream_attempts_total", "counter", "Requests sent to each backend (every attempt).");
  for (std::uint32_t b = 0; b < m.backends.size(); ++b)
    w.sample("smartlb_upstream_attempts_total", L{{"backend", be(b)}}, m.backends[b].attempts);
  w.family("smartlb_upstream_responses_total", "counter",
           "Attempts by backend and the status code of the response head (other: outside 100..599), or "
           "code=\"transport\" and the cause when no response head arrived.");
  each(CounterKind::UpstreamResponses, [&](const CounterKey& k, std::uint64_t v) {
    if (k.code >= kUpstreamTransport)
      w.sample("smartlb_upstream_responses_total",
               L{{"backend", be(k.backend)},
                 {"code", "transport"},
                 {"cause", std::string(to_string(static_cast<FailureCause>(k.code - kUpstreamTransport)))}},
               v);
    else
      w.sample("smartlb_upstream_responses_total",
               L{{"backend", be(k.backend)}, {"code", response_code(k.code)}}, v);
  });
  w.family("smartlb_failovers_total", "counter",
           "Attempts that failed over (another backend was tried, or none was left), by cause.");
  each(CounterKind::Failovers, [&](const CounterKey& k, std::uint64_t v) {
    w.sample("smartlb_failovers_total",
             L{{"backend", be(k.backend)},
               {"deployment", dep(k.deployment)},
               {"cause", std::string(to_string(static_cast<FailureCause>(k.code)))}},
             v);
  });
  w.family("smartlb_cooldowns_started_total", "counter",
           "Cooldowns started (or extended) on a backend or (backend, deployment), by cause.");
  each(CounterKind::CooldownsStarted, [&](const CounterKey& k, std::uint64_t v) {
    w.sample("smartlb_cooldowns_started_total",
             L{{"backend", be(k.backend)},
               {"deployment", dep(k.deployment)},
               {"cause", std::string(to_string(static_cast<FailureCause>(k.code)))}},
             v);
  });
  w.family("smartlb_upstream_aborted_total", "counter",
           "Responses cut off by the backend after their headers were relayed.");
  for (std::uint32_t b = 0; b < m.backends.size(); ++b)
    w.sample("smartlb_upstream_aborted_total", L{{"backend", be(b)}}, m.backends[b].upstream_aborted);
  w.family("smartlb_dns_lookups_total", "counter",
           "Host-name lookups for new backend connections (addresses are cached for 30 s), by result.");
  for (std::uint32_t b = 0; b < m.backends.size(); ++b) {
    const auto& bm = m.backends[b];
    w.sample("smartlb_dns_lookups_total", L{{"backend", be(b)}, {"result", "ok"}},
             bm.dns_lookups - bm.dns_failures);
    w.sample("smartlb_dns_lookups_total", L{{"backend", be(b)}, {"result", "failed"}}, bm.dns_failures);
  }

  w.family("smartlb_credential_refreshes_total", "counter",
           "Entra ID token requests of the backends with auth entra, by result (ok, failed).");
  for (std::uint32_t b = 0; b < m.backends.size(); ++b) {
    if (b >= p.backends.size() || !p.backends[b].credential) continue;
    const auto& bm = m.backends[b];
    w.sample("smartlb_credential_refreshes_total", L{{"backend", be(b)}, {"result", "ok"}},
             bm.credential_refreshes_ok);
    w.sample("smartlb_credential_refreshes_total", L{{"backend", be(b)}, {"result", "failed"}},
             bm.credential_refreshes_failed);
  }

  w.family("smartlb_backend_priority", "gauge",
           "Configured priority group of each backend (lower is preferred).");
  for (const std::uint32_t b : present_ids(p))
    w.sample("smartlb_backend_priority", L{{"backend", be(b)}}, std::to_string(p.backends[b].priority));
  w.family("smartlb_backend_weight", "gauge", "Configured weight of each backend inside its priority group.");
  for (const std::uint32_t b : present_ids(p))
    w.sample("smartlb_backend_weight", L{{"backend", be(b)}}, std::uint64_t{p.backends[b].weight});
  w.family(
      "smartlb_backend_state", "gauge",
      "1 for the backend's current state (available, cooling, unreachable, auth_failed), 0 for the others.");
  for (const std::uint32_t b : present_ids(p)) {
    const std::string_view st = backend_state(p.backends[b].cooldown, p.now);
    for (std::string_view s : {"available", "cooling", "unreachable", "auth_failed"})
      w.sample("smartlb_backend_state", L{{"backend", be(b)}, {"state", std::string(s)}},
               std::uint64_t{s == st ? 1u : 0u});
  }
  w.family("smartlb_backend_cooldown_remaining_seconds", "gauge",
           "Seconds until a backend-wide cooldown ends (0: not cooling).");
  for (const std::uint32_t b : present_ids(p))
    w.sample("smartlb_backend_cooldown_remaining_seconds", L{{"backend", be(b)}},
             static_cast<double>(cooldown_remaining_ms(p.backends[b].cooldown, p.now)) / 1e3);
  w.family("smartlb_deployment_cooldown_remaining_seconds", "gauge",
           "Seconds until the cooldown of a (backend, deployment) ends (0: not cooling).");
  for (const std::uint32_t b : present_ids(p)) {
    std::map<std::string, std::int64_t> by_label;  // folded names keep the longest cooldown
    for (const auto& d : p.backends[b].deployments) {
      auto& slot = by_label[deployment_label(m, d.name)];
      slot = std::max(slot, cooldown_remaining_ms(d.cooldown, p.now));
    }
    for (const auto& [label, rem] : by_label)
      w.sample("smartlb_deployment_cooldown_remaining_seconds", L{{"backend", be(b)}, {"deployment", label}},
               static_cast<double>(rem) / 1e3);
  }

  w.family(
      "smartlb_quota_used_ratio", "gauge",
      "Share of a declared quota (BACKEND_X_TPM / BACKEND_X_RPM) used in the current window, by resource.");
  for (const std::uint32_t b : present_ids(p)) {
    const auto& pb = p.backends[b];
    // Per deployment, against the limits that apply to it (its target's or its backend's); a
    // negative share: no such limit. Folded names keep the highest share.
    std::map<std::string, std::pair<double, double>> by_label;
    for (const auto& d : pb.deployments) {
      if (d.quota.tokens_limit <= 0 && d.quota.requests_limit <= 0) continue;
      auto& slot = by_label.try_emplace(deployment_label(m, d.name), -1.0, -1.0).first->second;
      if (d.quota.tokens_limit > 0)
        slot.first = std::max(slot.first, double(d.quota.tokens_used) / double(d.quota.tokens_limit));
      if (d.quota.requests_limit > 0)
        slot.second = std::max(slot.second, double(d.quota.requests_used) / double(d.quota.requests_limit));
    }
    for (const auto& [label, used] : by_label) {
      if (used.first >= 0)
        w.sample("smartlb_quota_used_ratio",
                 L{{"backend", be(b)}, {"deployment", label}, {"resource", "tokens"}}, used.first);
      if (used.second >= 0)
        w.sample("smartlb_quota_used_ratio",
                 L{{"backend", be(b)}, {"deployment", label}, {"resource", "requests"}}, used.second);
    }
  }

  w.family("smartlb_request_duration_seconds", "histogram",
           "Client request duration (head read to last byte relayed, failovers included), by the backend "
           "that served it.");
  for (std::uint32_t b = 0; b < m.backends.size(); ++b)
    w.histogram("smartlb_request_duration_seconds", L{{"backend", be(b)}}, m.backends[b].duration,
                kDurationBuckets.data(), kDurationBuckets.size());
  w.family("smartlb_upstream_ttfb_seconds", "histogram",
           "Time to first byte of each attempt: request sent to response header read.");
  for (std::uint32_t b = 0; b < m.backends.size(); ++b)
    w.histogram("smartlb_upstream_ttfb_seconds", L{{"backend", be(b)}}, m.backends[b].ttfb,
                kTtfbBuckets.data(), kTtfbBuckets.size());

  w.family("smartlb_prompt_tokens_total", "counter",
           "Prompt (input) tokens reported in the usage of served responses.");
  each(CounterKind::PromptTokens, [&](const CounterKey& k, std::uint64_t v) {
    w.sample("smartlb_prompt_tokens_total", L{{"backend", be(k.backend)}, {"deployment", dep(k.deployment)}},
             v);
  });
  w.family("smartlb_completion_tokens_total", "counter",
           "Completion (output) tokens reported in the usage of served responses.");
  each(CounterKind::CompletionTokens, [&](const CounterKey& k, std::uint64_t v) {
    w.sample("smartlb_completion_tokens_total",
             L{{"backend", be(k.backend)}, {"deployment", dep(k.deployment)}}, v);
  });
  w.family(
      "smartlb_deployment_labels_folded_total", "counter",
      "Requests whose deployment label was folded into \"other\" (more distinct deployments than the cap).");
  w.sample("smartlb_deployment_labels_folded_total", L{}, m.deployments_folded);
  if (m.redis.enabled) render_redis(w, m.redis);
  return w.take();
}

nlohmann::json redis_json(const redis::RedisStatus& r) {
  nlohmann::json replicas = nlohmann::json::array();
  for (const auto& x : r.replicas)
    replicas.push_back(
        {{"id", x.id}, {"host", x.host}, {"started_ms", x.started_ms}, {"expires_ms", x.expires_ms}});
  return {{"url", r.url},
          {"replica_id", r.replica_id},
          {"up", r.up},
          {"up_since_ms", r.up_since_ms},
          {"last_error", r.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.last_error)},
          {"last_error_ms", r.last_error_ms},
          {"replicas", std::move(replicas)}};
}

nlohmann::json build_status(const MetricsSnapshot& m, const PoolSnapshot& p) {
  using nlohmann::json;
  json doc;
  doc["version"] = kVersion;
  doc["ready"] = p.ready && !p.draining;
  doc["draining"] = p.draining;
  doc["uptime_s"] = p.started > 0 && p.now > p.started ? (p.now - p.started) / 1'000'000'000 : 0;
  doc["in_flight"] = m.in_flight();
  doc["requests"] = m.finished;
  doc["client_aborted"] = m.client_aborted;

  std::uint64_t client_throttled = 0, failovers = 0, answered_by_smartlb = 0;
  // Per backend and deployment label: requests served, 429s, tokens.
  struct DepCounts {
    std::uint64_t requests = 0, throttled = 0, failovers = 0, prompt = 0, completion = 0;
  };
  std::map<std::pair<std::uint32_t, std::string>, DepCounts> per_dep;
  // Per backend: attempts by response code ("other", or "transport" for every cause).
  std::map<std::uint32_t, std::map<std::string, std::uint64_t>> responses;
  for (const auto& [k, v] : m.counters) {
    const std::string d(m.deployment_name(k.deployment));
    switch (k.kind) {
      case CounterKind::Requests:
        if (k.backend == kNone)
          answered_by_smartlb += v;
        else
          per_dep[{k.backend, d}].requests += v;
        break;
      case CounterKind::Failovers:
        failovers += v;
        per_dep[{k.backend, d}].failovers += v;
        if (is_rate_limit(static_cast<FailureCause>(k.code))) per_dep[{k.backend, d}].throttled += v;
        break;
      case CounterKind::PromptTokens:
        per_dep[{k.backend, d}].prompt += v;
        break;
      case CounterKind::CompletionTokens:
        per_dep[{k.backend, d}].completion += v;
        break;
      case CounterKind::ClientThrottled:
        client_throttled += v;
        break;
      case CounterKind::UpstreamResponses:
        responses[k.backend]
                 [k.code >= kUpstreamTransport ? std::string("transport") : response_code(k.code)] += v;
        break;
      case CounterKind::CooldownsStarted:
        break;
    }
  }
  doc["client_throttled"] = client_throttled;
  doc["answered_by_smartlb"] = answered_by_smartlb;
  doc["failovers"] = failovers;

  std::uint64_t prompt = 0, completion = 0;
  json backends = json::array();
  for (const std::uint32_t b : present_ids(p)) {
    const auto& pb = p.backends[b];
    const BackendMetrics bm = b < m.backends.size() ? m.backends[b] : BackendMetrics{};
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
    jb["cooldown_cause"] = cooling(pb.cooldown, p.now) ? json(to_string(pb.cooldown.cause)) : json(nullptr);
    if (pb.quota_window_ms > 0)
      jb["quota"] = {{"tokens_per_window", pb.quota_tokens},
                     {"requests_per_window", pb.quota_requests},
                     {"window_ms", pb.quota_window_ms}};

    // Deployments: those with cooldown state in the pool, and those with traffic here.
    std::map<std::string, json> deps;
    const auto entry = [&](const std::string& name) -> json& {
      json& d = deps[name];
      if (d.is_null())
        d = {{"name", name},
             {"state", "available"},
             {"cooldown_remaining_ms", 0},
             {"cooldown_cause", nullptr},
             {"requests", 0},
             {"throttled", 0},
             {"failovers", 0},
             {"prompt_tokens", 0},
             {"completion_tokens", 0}};
      return d;
    };
    std::size_t cooling_deployments = 0;
    for (const auto& d : pb.deployments) {
      if (!cooling(d.cooldown, p.now) && m.deployment_index(d.name) < 0) continue;  // stale, unlabelled
      if (deps.size() >= Metrics::kMaxDeployments && !deps.count(d.name)) continue;
      json& j = entry(d.name);
      if (d.quota.tokens_limit > 0 || d.quota.requests_limit > 0) {
        j["quota_used"] = {{"tokens", d.quota.tokens_used}, {"requests", d.quota.requests_used}};
        // The limits that apply to this deployment: its target's (model_configs) or its backend's.
        j["quota"] = {{"tokens_per_window", d.quota.tokens_limit},
                      {"requests_per_window", d.quota.requests_limit}};
      }
      // Shared quotas: this replica's lease of the current sub-window.
      for (const auto& [key, view] :
           {std::pair{"tokens", d.lease.tokens}, std::pair{"requests", d.lease.requests}})
        if (view)
          j["lease"][key] = {{"shared", view->shared},
                             {"subwindow", view->subwindow},
                             {"leased", view->leased},
                             {"taken", view->taken},
                             {"next_leased", view->next_leased}};
      if (cooling(d.cooldown, p.now)) {
        ++cooling_deployments;
        j["state"] = "cooling";
        j["cooldown_remaining_ms"] = cooldown_remaining_ms(d.cooldown, p.now);
        j["cooldown_cause"] = to_string(d.cooldown.cause);
      }
    }
    for (auto it = per_dep.lower_bound({b, std::string()}); it != per_dep.end() && it->first.first == b;
         ++it) {
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

    jb["requests"] = bm.served;
    jb["attempts"] = bm.attempts;
    jb["errors"] = bm.errors;
    jb["throttled"] = bm.throttled;
    jb["upstream_aborted"] = bm.upstream_aborted;
    jb["dns_lookups"] = bm.dns_lookups;
    jb["dns_failures"] = bm.dns_failures;
    if (pb.credential) {
      const auto& c = *pb.credential;
      jb["credential"] = {{"source", c.source},
                          {"name", c.name},
                          {"state", c.state},
                          {"expires_at", c.expires_at_unix ? json(c.expires_at_unix) : json(nullptr)},
                          {"last_error", c.last_error.empty() ? json(nullptr) : json(c.last_error)},
                          {"refreshes_ok", bm.credential_refreshes_ok},
                          {"refreshes_failed", bm.credential_refreshes_failed}};
    }
    json jr = json::object();
    if (auto it = responses.find(b); it != responses.end())
      for (const auto& [code, n] : it->second) jr[code] = n;
    jb["responses"] = std::move(jr);
    if (bm.last_error.at != 0) {
      jb["last_error"] = {{"cause", to_string(bm.last_error.cause)},
                          {"status", bm.last_error.status},
                          {"deployment", bm.last_error.deployment},
                          {"ago_ms", p.now > bm.last_error.at ? (p.now - bm.last_error.at) / 1'000'000 : 0}};
    } else {
      jb["last_error"] = nullptr;
    }
    jb["prompt_tokens"] = bm.prompt_tokens;
    jb["completion_tokens"] = bm.completion_tokens;
    prompt += bm.prompt_tokens;
    completion += bm.completion_tokens;
    jb["latency_ms"] = histogram_json(bm.duration, kDurationBuckets.data(), kDurationBuckets.size());
    jb["ttfb_ms"] = histogram_json(bm.ttfb, kTtfbBuckets.data(), kTtfbBuckets.size());
    backends.push_back(std::move(jb));
  }
  doc["prompt_tokens"] = prompt;
  doc["completion_tokens"] = completion;
  doc["backends"] = std::move(backends);
  json config;
  config["hash"] = p.config_hash.empty() ? json(nullptr) : json(p.config_hash);
  json rules = json::array();
  for (const RuleStatus& r : p.rules) {
    json jr;
    jr["id"] = r.id;
    jr["type"] = r.type;
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
      jt["upstream_name"] = t.upstream_name.empty() ? json(nullptr) : json(t.upstream_name);
      if (r.type == "latency-based-routing")
        jt["latency"] = {{"ms_per_token", t.latency_ms_per_token}, {"samples", t.latency_samples}};
      targets.push_back(std::move(jt));
    }
    jr["targets"] = std::move(targets);
    rules.push_back(std::move(jr));
  }
  config["rules"] = std::move(rules);
  doc["config"] = std::move(config);
  json budgets = json::array();
  for (const BudgetStatus& b : p.budgets) {
    json limits = json::object(), used = json::object();
    const auto dimension = [&](const char* name, std::int64_t limit, std::int64_t value) {
      if (limit) limits[name] = limit;
      used[name] = value;
    };
    dimension("tokens_per_minute", b.limits.tokens_per_minute, b.tokens_minute);
    dimension("requests_per_minute", b.limits.requests_per_minute, b.requests_minute);
    dimension("tokens_per_day", b.limits.tokens_per_day, b.tokens_day);
    dimension("tokens_per_month", b.limits.tokens_per_month, b.tokens_month);
    json jb = {{"owner", b.owner}, {"name", b.name}, {"limits", limits}, {"used", used}};
    if (!b.principal.empty()) jb["caller"] = b.principal;
    budgets.push_back(std::move(jb));
  }
  doc["budgets"] = std::move(budgets);
  if (p.redis) doc["redis"] = redis_json(*p.redis);
  return doc;
}

}  // namespace smartlb
