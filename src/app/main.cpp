// smartlb: a load-balancing reverse proxy for OpenAI and Azure OpenAI endpoints.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#ifdef __GLIBC__  // defined by the headers above
#include <malloc.h>
#endif

#include <spdlog/spdlog.h>

#include "smartlb/admin/admin_server.hpp"
#include "smartlb/app/command_line.hpp"
#include "smartlb/app/descriptor_table.hpp"
#include "smartlb/app/file_watch.hpp"
#include "smartlb/app/periodic_thread.hpp"
#include "smartlb/app/reload_notes.hpp"
#include "smartlb/base/version.hpp"
#include "smartlb/config/check_report.hpp"
#include "smartlb/config/config_file.hpp"
#include "smartlb/config/env_settings.hpp"
#include "smartlb/net/server.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/redis/shared_admin.hpp"
#include "smartlb/redis/shared_class_demand.hpp"
#include "smartlb/redis/shared_cooldowns.hpp"
#include "smartlb/redis/shared_failures.hpp"
#include "smartlb/redis/shared_in_flight.hpp"
#include "smartlb/redis/shared_probes.hpp"
#include "smartlb/redis/shared_quotas.hpp"
#include "smartlb/redis/shared_reports.hpp"
#include "smartlb/telemetry/logging.hpp"
#include "smartlb/telemetry/metrics.hpp"
#include "smartlb/tracing/tracer.hpp"

namespace {

const char* kUsage = R"(smartlb - spreads OpenAI / Azure OpenAI traffic over many backends.

Usage: smartlb [--config FILE] [--check-config] [--help[-env]] [--version]

  --config FILE    the routing policy file, YAML or JSON (or CONFIG_FILE);
                   SIGHUP or a change of the file reloads it
  --check-config   validate the environment and the file, print every error
                   (exit 1) or a summary of the routing (exit 0), and exit
  --help-env       every environment variable, with its default
)";

// The settings --help shows: enough to start; --help-env and docs/configuration.md have all.
constexpr std::string_view kHelpSettings[] = {"BACKEND_X_URL",
                                              "BACKEND_X_APIKEY",
                                              "BACKEND_X_PRIORITY",
                                              "BACKEND_X_WEIGHT",
                                              "BACKEND_X_DEPLOYMENT_NAME",
                                              "BACKEND_X_AUTH",
                                              "BACKEND_X_TPM",
                                              "PORT",
                                              "ADMIN_PORT",
                                              "ADMIN_TOKENS",
                                              "CLIENT_API_KEYS",
                                              "REDIS_URL",
                                              "LOG_LEVEL"};

// The file's sections, from the loader's own list, wrapped at 80 columns.
std::string file_sections_help() {
  std::string out = "\nThe file's sections (docs/routing-policy.md):\n ";
  std::size_t column = 1;
  const auto keys = smartlb::config::config_file_keys();  // (a range-for over a temporary's element dangles)
  for (const std::string& key : keys.at("")) {
    if (key == "name" || key == "type") continue;  // a TrueFoundry file's header
    if (column + key.size() + 2 > 80) {
      out += "\n ";
      column = 1;
    }
    out += " " + key;
    column += key.size() + 1;
  }
  return out + "\n";
}

smartlb::redis::RedisServiceOptions redis_options(const smartlb::config::Config& cfg,
                                                  smartlb::telemetry::Metrics& metrics) {
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

}  // namespace

// Loads the configuration again and, when it is valid, routes with it; an invalid one is
// refused with its errors logged and the running one stays.
void reload(smartlb::net::Server& server, smartlb::telemetry::Metrics& metrics,
            smartlb::admin::AdminServer* admin, const std::optional<std::string>& file,
            smartlb::app::LoadedVersion& version, const char* why) {
  // The stamp before reading: a change made while it is read is seen as another version.
  if (file && !version.take(smartlb::app::stamp_of(*file))) {
    spdlog::info("reload ({}): {} is unchanged since it was loaded; nothing to do", why, *file);
    return;
  }
  auto loaded = smartlb::config::load_config(smartlb::config::current_environment(), file);
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
  for (const auto& s : smartlb::app::settings_needing_restart(server.config(), *loaded.config))
    spdlog::warn("reload ({}): {}", why, s);
  server.reload(*loaded.config);
  if (admin) admin->set_access(loaded.config->admin);  // rotated admin tokens apply at once
  std::vector<smartlb::telemetry::Metrics::BackendInfo> names;
  for (auto& n : server.backend_names()) names.push_back({std::move(n), {}});
  metrics.learn_backends(names);
  metrics.on_config_reload(true, now);
  spdlog::info("configuration reloaded ({}): {}", why, smartlb::config::describe_source(*loaded.config));
}

namespace {

// The answers of --help, --version and a bad command line: the exit code, or none to go on.
std::optional<int> answer_command_line(const smartlb::app::CommandLine& command) {
  if (!command.error.empty()) {
    std::fprintf(stderr, "smartlb: %s\n", command.error.c_str());
    return 2;
  }
  if (command.help) {
    std::fputs(kUsage, stdout);
    std::fputs(file_sections_help().c_str(), stdout);
    std::fputs("\nThe main environment variables (all errors are reported at once):\n", stdout);
    std::fputs(smartlb::config::env_settings_help(kHelpSettings).c_str(), stdout);
    std::fputs("\nEvery variable: smartlb --help-env. The reference: docs/configuration.md.\n", stdout);
    return 0;
  }
  if (command.help_env) {
    std::fputs(smartlb::config::env_settings_help().c_str(), stdout);
    return 0;
  }
  if (command.version) {
    std::printf("smartlb %s\n", smartlb::kVersion);
    return 0;
  }
  return std::nullopt;
}

// Signals are taken by a dedicated thread with sigwait; every other thread blocks them.
sigset_t block_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return signals;
}

// What replicas share through Redis (docs/scale-out.md): cooldowns, the admin API's settings, declared quotas
// and client budgets' minute limits and in-flight caps as leases, failure_tolerance counts, health probes'
// turns and results, short rate-limit reports, priority classes' demand. Made before the server starts, so
// that a cooldown seen before Redis answers is published once it does.
struct RedisSharing {
  std::unique_ptr<smartlb::redis::RedisService> redis;
  std::unique_ptr<smartlb::redis::SharedCooldowns> cooldowns;
  std::unique_ptr<smartlb::redis::SharedAdmin> admin;  // drains, disables, held cooldowns
  std::unique_ptr<smartlb::redis::SharedQuotas> quotas;
  std::unique_ptr<smartlb::redis::SharedInFlight> in_flight;  // client budgets' max_in_flight
  std::unique_ptr<smartlb::redis::SharedFailures> failures;
  std::unique_ptr<smartlb::redis::SharedProbes> probes;    // one health probe per backend per interval in all
  std::unique_ptr<smartlb::redis::SharedReports> reports;  // short x-ratelimit-remaining-* reports
  std::unique_ptr<smartlb::redis::SharedClassDemand> class_demand;  // what a lower class leaves room for

  RedisSharing(const smartlb::config::Config& cfg, smartlb::telemetry::Metrics& metrics,
               const smartlb::base::Clock& clock, smartlb::net::Server& server) {
    redis = std::make_unique<smartlb::redis::RedisService>(clock, redis_options(cfg, metrics));
    cooldowns = std::make_unique<smartlb::redis::SharedCooldowns>(*redis, server.states());
    admin = std::make_unique<smartlb::redis::SharedAdmin>(*redis, server.states());
    smartlb::redis::SharedQuotasOptions quota_options;
    quota_options.on_answer = [&metrics](std::int64_t asked, std::int64_t granted) {
      metrics.on_lease(asked, granted);
    };
    quota_options.on_failure = [&metrics] { metrics.on_lease_failed(); };
    quotas = std::make_unique<smartlb::redis::SharedQuotas>(*redis, clock, quota_options);
    server.states().set_lease_broker(quotas.get());
    server.budgets().set_lease_broker(quotas.get());
    smartlb::redis::SharedInFlightOptions in_flight_options;
    in_flight_options.on_failure = [&metrics] { metrics.on_lease_failed(); };
    in_flight = std::make_unique<smartlb::redis::SharedInFlight>(*redis, clock, in_flight_options);
    server.budgets().set_in_flight_broker(in_flight.get());
    failures = std::make_unique<smartlb::redis::SharedFailures>(*redis, server.states(), clock);
    server.set_failure_sharer(failures.get());
    probes = std::make_unique<smartlb::redis::SharedProbes>(*redis);
    server.set_probe_sharer(probes.get());
    reports = std::make_unique<smartlb::redis::SharedReports>(*redis, server.states());
    class_demand = std::make_unique<smartlb::redis::SharedClassDemand>(*redis, server.states(), clock);
  }
  // Stopped however main ends (an admin port in use throws after Redis started): nothing may
  // tick or call back into what is destroyed here.
  ~RedisSharing() { stop(); }
  RedisSharing(const RedisSharing&) = delete;
  RedisSharing& operator=(const RedisSharing&) = delete;
  // Deregisters this replica; then nothing calls back into the states. The quotas keep
  // pointing at the broker: it stays until the server is gone (no callback comes after stop).
  // Twice is harmless.
  void stop() {
    redis->stop();
    cooldowns.reset();
    admin.reset();
    reports.reset();
    class_demand.reset();
  }
};

void log_started(const smartlb::config::Config& cfg, const smartlb::net::Server& server,
                 const smartlb::admin::AdminServer* admin) {
  spdlog::info("smartlb {} listening on {}:{} with {}", smartlb::kVersion, cfg.listen_address, server.port(),
               smartlb::config::describe_source(cfg));
  for (const auto& b : cfg.backends)
    spdlog::info("  backend {}: {}://{}{} priority={} weight={}{}{}", b.name, b.url.tls ? "https" : "http",
                 b.url.host_header, b.url.base_path, b.priority, b.weight,
                 b.deployment_name.empty() ? "" : " deployment=" + b.deployment_name,
                 b.api_key.empty() ? " (no api key: client credentials pass through)" : "");
  if (!admin) return;
  spdlog::info("admin endpoints (/, /status, /metrics, /healthz, /readyz, /admin/) on {}:{}",
               cfg.listen_address, admin->port());
  if (cfg.admin.tokens.empty())
    spdlog::info(
        "admin port without tokens: /status and /metrics are open to whoever reaches it, and the admin API "
        "refuses every change (set ADMIN_TOKENS; docs/operations.md)");
}

// One line on tracing for the log and --check-config: where spans go and which are kept. The
// headers by name only: their values carry keys.
std::string describe_tracing(const smartlb::tracing::TraceConfig& t) {
  std::string s = "traces: OTLP/JSON to " + t.endpoint + ", sampler " +
                  std::string(smartlb::tracing::to_string(t.sampler.kind));
  if (smartlb::tracing::takes_ratio(t.sampler.kind)) s.append(" ").append(std::to_string(t.sampler.ratio));
  for (std::size_t i = 0; i < t.headers.size(); ++i) s += (i ? ", " : "; headers ") + t.headers[i].first;
  return s;
}

// The Tracer (tracing on), its drops and exports counted in the metrics.
std::unique_ptr<smartlb::tracing::Tracer> start_tracer(const smartlb::tracing::TraceConfig& t,
                                                       const smartlb::config::Config& cfg,
                                                       smartlb::telemetry::Metrics& metrics) {
  if (!t.enabled()) return nullptr;
  metrics.enable_tracing();
  smartlb::tracing::TracerHooks h;
  h.on_exported = [&metrics](std::size_t n) { metrics.on_spans_exported(n); };
  h.on_dropped = [&metrics](smartlb::tracing::DropReason r, std::size_t n) {
    metrics.on_spans_dropped(static_cast<unsigned>(r), n);
  };
  return smartlb::tracing::make_tracer(t, cfg.upstream_ca_file, std::move(h));
}

// How long the spans still queued at SIGTERM get to reach the collector, after the drain.
constexpr std::chrono::seconds kTraceFlushBound{5};

// Reloads run on one thread at a time: SIGHUP's and the file watch's share this mutex.
std::mutex reload_mutex;

// SIGHUP reloads; SIGTERM or SIGINT drains, and a second one exits at once.
void handle_signals(sigset_t signals, smartlb::net::Server& server, smartlb::telemetry::Metrics& metrics,
                    smartlb::admin::AdminServer* admin, std::optional<std::string> config_file,
                    smartlb::app::LoadedVersion& version) {
  std::thread([&server, &metrics, admin, signals, config_file, &version] {
    int sig = 0;
    for (;;) {
      sigwait(&signals, &sig);
      if (sig != SIGHUP) break;
      std::lock_guard lock(reload_mutex);
      reload(server, metrics, admin, config_file, version, "SIGHUP");
    }
    spdlog::info("received {}, draining (up to {} s)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                 server.config().shutdown_timeout.count());
    server.request_stop();
    do sigwait(&signals, &sig);
    while (sig == SIGHUP);
    spdlog::warn("second signal: exiting at once");
    std::_Exit(1);
  }).detach();
}

// The configuration as loaded at start, or the exit code of --check-config or of a refusal.
struct Loaded {
  std::optional<smartlb::config::ConfigLoadResult> load;
  std::optional<std::string> file;
  smartlb::app::FileStamp stamp;         // the file's before it was read: a change from then on reloads
  smartlb::tracing::TraceConfig traces;  // OTEL_*: read at start only
  int exit_code = 0;
};

Loaded load_at_start(const smartlb::app::CommandLine& command) {
  Loaded l;
  const smartlb::config::EnvMap env = smartlb::config::current_environment();
  l.file = command.config_file;
  if (!l.file)
    if (auto it = env.find("CONFIG_FILE"); it != env.end()) l.file = it->second;
  l.stamp = l.file ? smartlb::app::stamp_of(*l.file) : smartlb::app::FileStamp{};
  auto loaded = smartlb::config::load_config(env, l.file);
  // Tracing's settings are process settings too: their problems are the configuration's.
  smartlb::tracing::TraceConfigResult traces = smartlb::tracing::load_trace_config(env);
  loaded.errors.insert(loaded.errors.end(), traces.errors.begin(), traces.errors.end());
  loaded.warnings.insert(loaded.warnings.end(), traces.warnings.begin(), traces.warnings.end());
  if (!traces.config) loaded.config.reset();
  if (command.check_only) {
    const smartlb::config::CheckReport report = smartlb::config::check_report(loaded);
    std::fputs(report.err.c_str(), stderr);
    std::fputs(report.out.c_str(), stdout);
    if (report.exit_code == 0 && traces.config->enabled())
      std::printf("%s\n", describe_tracing(*traces.config).c_str());
    l.exit_code = report.exit_code;
    return l;
  }
  if (!loaded.config) {
    std::fprintf(stderr, "smartlb: refusing to start, the configuration has %zu error(s):\n",
                 loaded.errors.size());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  - %s\n", e.c_str());
    l.exit_code = 2;
    return l;
  }
  l.load = std::move(loaded);
  l.traces = std::move(*traces.config);
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  const smartlb::app::CommandLine command = smartlb::app::parse_command_line(argc, argv);
  if (const auto answered = answer_command_line(command)) return *answered;
  Loaded loaded = load_at_start(command);
  if (!loaded.load) return loaded.exit_code;
  smartlb::config::Config cfg = std::move(*loaded.load->config);
  smartlb::telemetry::setup_logging(cfg.log_level, cfg.log_format);
  for (const auto& w : loaded.load->warnings) spdlog::warn("{}", w);
  // While this is the only thread: a table grown later stalls a worker (descriptor_table.hpp).
  const std::size_t descriptors =
      smartlb::app::descriptors_to_reserve(cfg.max_connections, smartlb::app::raise_descriptor_limit());
  if (!smartlb::app::reserve_descriptor_table(descriptors))
    spdlog::warn("could not make room for {} file descriptors at start: the table grows as connections come",
                 descriptors);
  const sigset_t signals = block_signals();

  std::vector<smartlb::telemetry::Metrics::BackendInfo> metric_backends;
  for (const auto& b : cfg.backends) metric_backends.push_back({b.name, b.deployment_name});
  smartlb::telemetry::Metrics metrics(std::move(metric_backends));
  const smartlb::base::SystemClock clock;
  std::unique_ptr<smartlb::tracing::Tracer> tracer;  // outlives the server: its workers end requests into it
  std::unique_ptr<smartlb::net::Server> server_holder;
  std::unique_ptr<RedisSharing> sharing;
  std::unique_ptr<smartlb::admin::AdminServer> admin;
  try {
    // Building the server loads the upstream CA bundle, which can fail too.
    tracer = start_tracer(loaded.traces, cfg, metrics);
    server_holder = std::make_unique<smartlb::net::Server>(
        cfg, smartlb::net::ServerOptions{.observer = &metrics, .tracer = tracer.get()});
    if (cfg.redis.enabled()) sharing = std::make_unique<RedisSharing>(cfg, metrics, clock, *server_holder);
    server_holder->start();
    // Unreachable is fine (local state, retried in the background); refused credentials are not.
    if (sharing) sharing->redis->start();
    if (cfg.admin_port != 0) {
      admin = std::make_unique<smartlb::admin::AdminServer>(
          *server_holder, metrics,
          smartlb::admin::AdminOptions{cfg.listen_address, cfg.admin_port,
                                       sharing ? sharing->redis.get() : nullptr, cfg.status_sample_interval,
                                       cfg.admin});
      admin->start();
    }
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  smartlb::net::Server& server = *server_holder;
  log_started(cfg, server, admin.get());
  if (tracer) spdlog::info("{}", describe_tracing(loaded.traces));
  // Lives as long as the process: the signal thread is detached.
  static smartlb::app::LoadedVersion version(loaded.stamp);
  handle_signals(signals, server, metrics, admin.get(), loaded.file, version);
  std::unique_ptr<smartlb::app::FileWatch> watch;
  if (loaded.file)
    watch = std::make_unique<smartlb::app::FileWatch>(
        *loaded.file, loaded.stamp, cfg.config_watch_interval,
        [&server, &metrics, admin = admin.get(), file = loaded.file] {
          std::lock_guard lock(reload_mutex);
          reload(server, metrics, admin, file, version, "file changed");
        });

#ifdef __GLIBC__
  // glibc keeps what the worker threads free in their arenas: after a burst (a stall that piles
  // up requests) RSS would stay at the burst's high-water mark for good. Handing whole free
  // pages back every 10 s keeps RSS following what is in use (bench/soak.sh); a trim of a few
  // MiB of heap takes tens of microseconds.
  const smartlb::app::PeriodicThread memory_trim(std::chrono::seconds(10), [] { ::malloc_trim(0); });
#endif

  server.wait();
  if (tracer) {
    tracer->shutdown(kTraceFlushBound);  // what the last requests left in the queue
    spdlog::info("traces: {} span(s) exported in all", tracer->exported());
  }
  watch.reset();
  if (admin) admin->stop();
  if (sharing) sharing->stop();
  spdlog::info("stopped");
  return 0;
}
