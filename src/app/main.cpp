// smartlb: a load-balancing reverse proxy for OpenAI and Azure OpenAI endpoints.
#include <sys/resource.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "smartlb/admin/admin_server.hpp"
#include "smartlb/app/command_line.hpp"
#include "smartlb/app/file_watch.hpp"
#include "smartlb/app/periodic_thread.hpp"
#include "smartlb/app/reload_notes.hpp"
#include "smartlb/base/version.hpp"
#include "smartlb/config/config_file.hpp"
#include "smartlb/net/server.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/redis/shared_cooldowns.hpp"
#include "smartlb/redis/shared_failures.hpp"
#include "smartlb/redis/shared_quotas.hpp"
#include "smartlb/telemetry/logging.hpp"
#include "smartlb/telemetry/metrics.hpp"
#include "smartlb/tracing/tracer.hpp"

namespace {

const char* kHelp = R"(smartlb - spreads OpenAI / Azure OpenAI traffic over many backends.

Usage: smartlb [--config FILE] [--check-config] [--help] [--version]

  --config FILE    the routing policy file (YAML or JSON; also --config=FILE, or CONFIG_FILE):
                   backends, targets, clients, token_issuers, rules, model_configs. SIGHUP or a
                   change of the file reloads it.
  --check-config   validate the environment and the file, print every error (exit 1) or a
                   summary of the routing (exit 0), and exit

Configured by environment variables (all errors are reported at once):
  BACKEND_X_URL              https://name.openai.azure.com or http://host:port (required; X = 1, 2, ...)
  BACKEND_X_PRIORITY         lower is preferred (default 1)
  BACKEND_X_WEIGHT           share inside its priority group (default 1)
  BACKEND_X_APIKEY           the backend's key (sent as api-key or Authorization: Bearer)
  BACKEND_X_DEPLOYMENT_NAME  replaces the deployment segment of /openai/deployments/{name}/..., and the
                             body's model of /v1/... and /openai/v1/... requests
  BACKEND_X_NAME             shown in logs and the x-smartlb-backend header (default backend-X)
  BACKEND_X_AUTH             auto | api-key | bearer | entra (default auto)
  BACKEND_X_ENTRA_SOURCE     entra: auto | client-secret | workload-identity | app-service | imds
  BACKEND_X_ENTRA_SCOPE      entra: token scope (https://cognitiveservices.azure.com/.default)
  BACKEND_X_ENTRA_CLIENT_ID  entra: a user-assigned managed identity's client id
  AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_FEDERATED_TOKEN_FILE,
  AZURE_AUTHORITY_HOST, IDENTITY_ENDPOINT, IDENTITY_HEADER  read as Azure's SDKs do (docs/keyless-azure.md)
  BACKEND_X_TPM, BACKEND_X_RPM  declared quota per deployment: route ahead of the backend's 429
  BACKEND_X_QUOTA_GROUP      backends naming one group share one declared quota
  QUOTA_WINDOW_SECONDS (60)  window the declared quotas are enforced over
  ROUTE_ON_REMAINING (on)    route ahead of the 429 on the backends' x-ratelimit-remaining-* reports
  PORT (8080)  LISTEN_ADDRESS (0.0.0.0)  ADMIN_PORT (9090, 0 = off)  THREADS (0 = the CPUs it may use)
  HTTP_TIMEOUT_SECONDS (100)  CONNECT_TIMEOUT_SECONDS (10)  REQUEST_TIMEOUT_SECONDS (300)
  CLIENT_IDLE_TIMEOUT_SECONDS (75)  SHUTDOWN_TIMEOUT_SECONDS (30)
  DEFAULT_COOLDOWN_SECONDS (10)  MAX_COOLDOWN_SECONDS (300)
  MAX_REQUEST_BODY_BYTES (33554432)  MAX_HEADER_COUNT (100)  MAX_CONNECTIONS (16384)
  STREAM_HOLDBACK_BYTES (65536, 0 = off)  an event stream's start held back to fail over an error
  LOG_LEVEL (info)  LOG_FORMAT (text | json)  ACCESS_LOG (on)
  CLIENT_API_KEYS            comma-separated keys clients must present (default: no check)
  CLIENT_TOKENS_PER_MINUTE   every caller's budget: tokens per minute (also CLIENT_REQUESTS_PER_MINUTE,
                             CLIENT_TOKENS_PER_DAY, CLIENT_TOKENS_PER_MONTH; docs/client-budgets.md)
  CLIENT_ENTRA_TENANT_ID, CLIENT_ENTRA_AUDIENCE (comma-separated), CLIENT_ENTRA_ROLES (any one of)
                             clients may present that tenant's Entra ID tokens (Bearer JWT)
  UPSTREAM_CA_FILE           extra CA bundle to trust for backend TLS
  CONFIG_FILE                the routing policy file (as --config)
  CONFIG_WATCH_INTERVAL_MS (1000)  how often the file is checked for a change
  REDIS_URL                  redis://[user:password@]host[:port][/db] or rediss://: replicas share
                             cooldowns through Redis (docs/scale-out.md); unset: each keeps its own
  REDIS_KEY_PREFIX (smartlb:)  REDIS_CA_FILE  REDIS_TIMEOUT_MS (200)  REPLICA_ID (hostname-pid)
  OTEL_EXPORTER_OTLP_ENDPOINT  an OTLP/HTTP collector (http/json): traces are exported to
                             <endpoint>/v1/traces (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is); unset:
                             no tracing. Also OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _CERTIFICATE, _PROTOCOL,
                             OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER (+ _ARG),
                             OTEL_BSP_* (docs/observability.md, "Traces")

See docs/configuration.md for the full reference.
)";

void raise_fd_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

smartlb::redis::RedisServiceOptions redis_options(const smartlb::Config& cfg, smartlb::Metrics& metrics) {
  metrics.enable_redis();
  smartlb::redis::RedisServiceOptions o;
  o.config = cfg.redis;
  o.fallback_ca_file = cfg.upstream_ca_file;
  o.on_state = [&metrics](bool up) { metrics.on_redis_state(up); };
  o.on_error = [&metrics] { metrics.on_redis_error(); };
  o.on_command = [&metrics](double seconds) { metrics.on_redis_command(seconds); };
  o.on_replicas = [&metrics](std::size_t n) { metrics.on_replicas_live(n); };
  return o;
}

// One line on tracing for the log and --check-config: where spans go and which are kept. The
// headers by name only: their values carry keys.
std::string describe_tracing(const smartlb::tracing::TraceConfig& t) {
  std::string s = "traces: OTLP/JSON to " + t.endpoint + ", sampler " +
                  std::string(smartlb::tracing::to_string(t.sampler.kind));
  if (smartlb::tracing::takes_ratio(t.sampler.kind)) s += " " + std::to_string(t.sampler.ratio);
  for (std::size_t i = 0; i < t.headers.size(); ++i) s += (i ? ", " : "; headers ") + t.headers[i].first;
  return s;
}

smartlb::tracing::TracerHooks tracer_hooks(smartlb::Metrics& metrics) {
  metrics.enable_tracing();
  smartlb::tracing::TracerHooks h;
  h.on_exported = [&metrics](std::size_t n) { metrics.on_spans_exported(n); };
  h.on_dropped = [&metrics](smartlb::tracing::DropReason r, std::size_t n) {
    metrics.on_spans_dropped(static_cast<unsigned>(r), n);
  };
  return h;
}

// How long the spans still queued at SIGTERM get to reach the collector, after the drain.
constexpr std::chrono::seconds kTraceFlushBound{5};

}  // namespace

// Loads the configuration again and, when it is valid, routes with it; an invalid one is
// refused with its errors logged and the running one stays.
void reload(smartlb::Server& server, smartlb::Metrics& metrics, const std::optional<std::string>& file,
            const char* why) {
  auto loaded = smartlb::load_config(smartlb::current_environment(), file);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!loaded.config) {
    spdlog::error(
        "reload ({}) refused: the configuration has {} error(s); still routing with the previous one", why,
        loaded.errors.size());
    for (const auto& e : loaded.errors) spdlog::error("  - {}", e);
    metrics.on_config_reload(false, now);
    return;
  }
  for (const auto& w : loaded.warnings) spdlog::warn("{}", w);
  for (const auto& s : smartlb::settings_needing_restart(server.config(), *loaded.config))
    spdlog::warn("reload ({}): {}", why, s);
  server.reload(*loaded.config);
  std::vector<smartlb::Metrics::BackendInfo> names;
  for (auto& n : server.backend_names()) names.push_back({std::move(n), {}});
  metrics.learn_backends(names);
  metrics.on_config_reload(true, now);
  spdlog::info("configuration reloaded ({}): {}", why, smartlb::describe_source(*loaded.config));
}

int main(int argc, char** argv) {
  const smartlb::CommandLine command = smartlb::parse_command_line(argc, argv);
  if (!command.error.empty()) {
    std::fprintf(stderr, "smartlb: %s\n", command.error.c_str());
    return 2;
  }
  if (command.help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (command.version) {
    std::printf("smartlb %s\n", smartlb::kVersion);
    return 0;
  }
  std::optional<std::string> config_file = command.config_file;
  const bool check_only = command.check_only;

  const smartlb::EnvMap env = smartlb::current_environment();
  if (!config_file)
    if (auto it = env.find("CONFIG_FILE"); it != env.end()) config_file = it->second;
  // The file's stamp before it is read: a change from then on reloads (file_watch.hpp).
  const smartlb::FileStamp loaded_stamp =
      config_file ? smartlb::stamp_of(*config_file) : smartlb::FileStamp{};
  auto loaded = smartlb::load_config(env, config_file);
  // Tracing's settings (OTEL_*) are process settings read once: their problems are the
  // configuration's.
  const smartlb::tracing::TraceConfigResult traces = smartlb::tracing::load_trace_config(env);
  loaded.errors.insert(loaded.errors.end(), traces.errors.begin(), traces.errors.end());
  loaded.warnings.insert(loaded.warnings.end(), traces.warnings.begin(), traces.warnings.end());
  if (!traces.config) loaded.config.reset();
  if (check_only) {
    for (const auto& w : loaded.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (!loaded.config) {
      std::fprintf(stderr, "smartlb: the configuration has %zu error(s):\n", loaded.errors.size());
      for (const auto& e : loaded.errors) std::fprintf(stderr, "  - %s\n", e.c_str());
      return 1;
    }
    std::fputs(smartlb::describe_routing(*loaded.config).c_str(), stdout);
    if (traces.config->enabled()) std::printf("%s\n", describe_tracing(*traces.config).c_str());
    return 0;
  }
  if (!loaded.config) {
    std::fprintf(stderr, "smartlb: refusing to start, the configuration has %zu error(s):\n",
                 loaded.errors.size());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  - %s\n", e.c_str());
    return 2;
  }
  smartlb::Config cfg = std::move(*loaded.config);
  smartlb::setup_logging(cfg.log_level, cfg.log_format);
  for (const auto& w : loaded.warnings) spdlog::warn("{}", w);
  raise_fd_limit();

  // Signals are taken by a dedicated thread with sigwait; every other thread blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::vector<smartlb::Metrics::BackendInfo> metric_backends;
  for (const auto& b : cfg.backends) metric_backends.push_back({b.name, b.deployment_name});
  smartlb::Metrics metrics(std::move(metric_backends));
  std::unique_ptr<smartlb::tracing::Tracer> tracer;  // outlives the server: its workers end requests into it
  std::unique_ptr<smartlb::Server> server_holder;
  std::unique_ptr<smartlb::AdminServer> admin;
  const smartlb::SystemClock clock;
  std::unique_ptr<smartlb::redis::RedisService> redis;
  std::unique_ptr<smartlb::redis::SharedCooldowns> shared_cooldowns;
  std::unique_ptr<smartlb::redis::SharedQuotas> shared_quotas;
  std::unique_ptr<smartlb::redis::SharedFailures> shared_failures;
  try {
    // Building the server loads the upstream CA bundle, which can fail too.
    if (traces.config->enabled())
      tracer = smartlb::tracing::make_tracer(*traces.config, cfg.upstream_ca_file, tracer_hooks(metrics));
    server_holder = std::make_unique<smartlb::Server>(
        cfg, smartlb::ServerOptions{.observer = &metrics, .tracer = tracer.get()});
    if (cfg.redis.enabled()) {
      // Listening before the first request: a cooldown seen before Redis answers is published
      // once it does.
      redis = std::make_unique<smartlb::redis::RedisService>(clock, redis_options(cfg, metrics));
      shared_cooldowns = std::make_unique<smartlb::redis::SharedCooldowns>(*redis, server_holder->states());
      // Declared quotas and client budgets' minute limits are leased from Redis (every quota made from the
      // first request on).
      smartlb::redis::SharedQuotasOptions quota_options;
      quota_options.on_answer = [&metrics](std::int64_t asked, std::int64_t granted) {
        metrics.on_lease(asked, granted);
      };
      quota_options.on_failure = [&metrics] { metrics.on_lease_failed(); };
      shared_quotas = std::make_unique<smartlb::redis::SharedQuotas>(*redis, clock, quota_options);
      server_holder->states().set_lease_broker(shared_quotas.get());
      server_holder->budgets().set_lease_broker(shared_quotas.get());
      // failure_tolerance counts too: a target's failures on all replicas trip its breaker.
      shared_failures =
          std::make_unique<smartlb::redis::SharedFailures>(*redis, server_holder->states(), clock);
      server_holder->set_failure_sharer(shared_failures.get());
    }
    server_holder->start();
    // Unreachable is fine (local state, retried in the background); refused credentials are not.
    if (redis) redis->start();
    if (cfg.admin_port != 0) {
      admin = std::make_unique<smartlb::AdminServer>(
          *server_holder, metrics,
          smartlb::AdminOptions{cfg.listen_address, cfg.admin_port, redis.get(), cfg.status_sample_interval});
      admin->start();
    }
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  smartlb::Server& server = *server_holder;
  spdlog::info("smartlb {} listening on {}:{} with {}", smartlb::kVersion, cfg.listen_address, server.port(),
               smartlb::describe_source(cfg));
  for (const auto& b : cfg.backends)
    spdlog::info("  backend {}: {}://{}{} priority={} weight={}{}{}", b.name, b.url.tls ? "https" : "http",
                 b.url.host_header, b.url.base_path, b.priority, b.weight,
                 b.deployment_name.empty() ? "" : " deployment=" + b.deployment_name,
                 b.api_key.empty() ? " (no api key: client credentials pass through)" : "");
  if (tracer) spdlog::info("{}", describe_tracing(*traces.config));
  if (admin)
    spdlog::info("admin endpoints (/, /status, /metrics, /healthz, /readyz) on {}:{}", cfg.listen_address,
                 admin->port());

  // Reloads run on one thread at a time: SIGHUP's and the file watch's share this mutex.
  static std::mutex reload_mutex;
  std::thread([&server, &metrics, signals, config_file] {
    int sig = 0;
    for (;;) {
      sigwait(&signals, &sig);
      if (sig != SIGHUP) break;
      std::lock_guard lock(reload_mutex);
      reload(server, metrics, config_file, "SIGHUP");
    }
    spdlog::info("received {}, draining (up to {} s)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                 server.config().shutdown_timeout.count());
    server.request_stop();
    do sigwait(&signals, &sig);
    while (sig == SIGHUP);
    spdlog::warn("second signal: exiting at once");
    std::_Exit(1);
  }).detach();
  std::unique_ptr<smartlb::FileWatch> watch;
  if (config_file) {
    watch = std::make_unique<smartlb::FileWatch>(*config_file, loaded_stamp, cfg.config_watch_interval,
                                                 [&server, &metrics, config_file] {
                                                   std::lock_guard lock(reload_mutex);
                                                   reload(server, metrics, config_file, "file changed");
                                                 });
  }

#ifdef __GLIBC__
  // glibc keeps what the worker threads free in their arenas: after a burst (a stall that piles
  // up requests) RSS would stay at the burst's high-water mark for good. Handing whole free
  // pages back every 10 s keeps RSS following what is in use (bench/soak.sh); a trim of a few
  // MiB of heap takes tens of microseconds.
  const smartlb::PeriodicThread memory_trim(std::chrono::seconds(10), [] { ::malloc_trim(0); });
#endif

  server.wait();
  if (tracer) {
    tracer->shutdown(kTraceFlushBound);  // what the last requests left in the queue
    spdlog::info("traces flushed: {} span(s) exported in all", tracer->exported());
  }
  watch.reset();
  if (admin) admin->stop();
  if (redis) redis->stop();  // deregisters this replica; then nothing calls back into the states
  shared_cooldowns.reset();
  // The quotas keep pointing at the broker: it stays until the server is gone (no callback
  // comes after redis->stop()).
  spdlog::info("stopped");
  return 0;
}
