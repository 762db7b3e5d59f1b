#pragma once
// Request metrics: a RequestObserver that aggregates finished requests, cheap and without a
// global lock on the hot path (relaxed atomics per backend, and small per-thread shards for
// the labelled counters, summed when scraped). Plain C++, no sockets.
//
// Labels are bounded: backends are fixed by the configuration, and deployments -- chosen by
// clients -- are capped at kMaxDeployments distinct values; later ones fold into "other".
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::telemetry {

// Fixed upper bounds (seconds, or attempts) of the histograms. +Inf is implicit.
inline constexpr std::array<double, 14> kDurationBuckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,
                                                            10,   20,  30,   60,  120, 180, 300};
inline constexpr std::array<double, 12> kTtfbBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                        0.5,   1,    2.5,   5,    10,  30};
inline constexpr std::array<double, 6> kAttemptBuckets = {1, 2, 3, 4, 6, 10};
inline constexpr std::array<double, 11> kRedisBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                         0.01,   0.025,   0.05,   0.1,   0.25};

// A histogram's values at one instant: per-bucket (not cumulative) counts, the last one
// being +Inf.
struct HistogramSnapshot {
  std::vector<std::uint64_t> buckets;
  std::uint64_t count = 0;
  double sum = 0;  // seconds (or attempts)
  // The value at quantile q (0..1), linearly interpolated inside the bucket; 0 when empty.
  double quantile(double q, const double* bounds, std::size_t n_bounds) const;
};

// Labelled counters. `backend` is a backend index, or Metrics::kNoBackend for answers
// smartlb gave itself; `deployment` an index into MetricsSnapshot::deployments.
enum class CounterKind : std::uint8_t {
  Requests,           // code = the client's status
  Failovers,          // code = FailureCause
  CooldownsStarted,   // code = FailureCause
  PromptTokens,       // code unused (0)
  CompletionTokens,   // code unused (0)
  ClientThrottled,    // client-facing 429s; code 0: every backend was rate limited, 1: a client budget
  UpstreamResponses,  // per attempt, by backend; deployment unused (0); code = upstream_response_code()
  // What answers cost (pico-units of the prices' currency), by serving backend; deployment = an
  // index into MetricsSnapshot::cost_models, code = the client's index in MetricsSnapshot::clients
  // (Metrics::kMaxClients: "other").
  Cost,
};

// The `code` of an UpstreamResponses counter: the status of an attempt that got a response
// head (100..599; any other status is kUpstreamOtherStatus), or kUpstreamTransport plus the
// FailureCause of an attempt that ended without one. Bounded: 500 + 1 + the causes.
inline constexpr std::uint32_t kUpstreamOtherStatus = 600;
inline constexpr std::uint32_t kUpstreamTransport = 1000;
constexpr std::uint32_t upstream_response_code(unsigned status, routing::FailureCause cause) {
  if (status == 0) return kUpstreamTransport + static_cast<std::uint32_t>(cause);
  return status >= 100 && status <= 599 ? status : kUpstreamOtherStatus;
}

struct CounterKey {
  CounterKind kind;
  std::uint32_t backend;
  std::uint32_t deployment;
  std::uint32_t code;
  auto operator<=>(const CounterKey&) const = default;
};

struct LastError {
  routing::FailureCause cause = routing::FailureCause::None;
  unsigned status = 0;
  base::MonoNanos at = 0;  // 0: never
  std::string deployment;
};

struct BackendMetrics {
  std::uint64_t attempts = 0;                     // every attempt sent to this backend
  std::uint64_t served = 0;                       // client requests it answered
  std::uint64_t errors = 0;                       // failed attempts (any cause) + aborted relays
  std::uint64_t throttled = 0;                    // 429 attempts
  std::uint64_t upstream_aborted = 0;             // failed after the headers were relayed
  std::uint64_t dns_lookups = 0;                  // host-name lookups for new connections
  std::uint64_t dns_failures = 0;                 // of which found no address
  std::uint64_t credential_refreshes_ok = 0;      // Entra ID tokens fetched for it
  std::uint64_t credential_refreshes_failed = 0;  // token requests that failed
  std::uint64_t prompt_tokens = 0;
  std::uint64_t completion_tokens = 0;
  HistogramSnapshot duration;  // client request duration, for requests it served
  HistogramSnapshot ttfb;      // request sent -> response header, every attempt with a header
  LastError last_error;
};

// One caller's requests and tokens (clients are named by their entries, never by a key).
struct ClientMetrics {
  std::string name;
  std::uint64_t requests = 0;
  std::uint64_t throttled = 0;  // 429s it got, of any cause
  std::uint64_t limited = 0;    // of which its own budgets refused
  std::uint64_t prompt_tokens = 0, completion_tokens = 0;
};

// Scale-out through Redis (docs/scale-out.md); only shown when REDIS_URL is set.
struct RedisMetrics {
  bool enabled = false;
  bool up = false;
  std::uint64_t errors = 0;         // failed connection attempts, lost connections, failed commands
  std::uint64_t replicas_live = 0;  // as last read (this one included)
  HistogramSnapshot commands;       // round trip of each command, seconds
  // Shared quotas' lease asks: granted in full, granted less (the shared quota is spent for
  // the sub-window), unanswered (Redis lost); tokens or requests granted.
  std::uint64_t leases_full = 0, leases_short = 0, leases_failed = 0, leased = 0;
};

// Traces (docs/observability.md, "Traces"); only shown when tracing is on.
struct TracingMetrics {
  bool enabled = false;
  std::uint64_t exported = 0;  // spans the collector took
  // Spans dropped: the queue was full, the collector did not take their batch, the flush on
  // SIGTERM ran out of time.
  std::uint64_t dropped_queue_full = 0, dropped_export_failed = 0, dropped_shutdown = 0;
};

struct MetricsSnapshot {
  std::vector<std::string> backend_names;
  std::vector<std::string> deployments;  // label values by index (Metrics::kMaxDeployments: "other")
  std::map<CounterKey, std::uint64_t> counters;
  std::vector<BackendMetrics> backends;
  std::uint64_t started = 0;   // requests whose head was read
  std::uint64_t finished = 0;  // requests that ended
  std::uint64_t client_aborted = 0;
  std::uint64_t deployments_folded = 0;  // requests whose deployment was folded into "other"
  std::uint64_t reloads_ok = 0, reloads_failed = 0;
  double last_reload_success = 0;        // Unix seconds (0: none yet)
  HistogramSnapshot attempts;            // attempts per request (requests with at least one attempt)
  std::vector<ClientMetrics> clients;    // by first sight; "other" for those past Metrics::kMaxClients
  std::vector<std::string> cost_models;  // the price entries priced answers had (CounterKind::Cost)
  std::map<std::string, std::uint64_t> auth_failures;  // 401s by reason
  struct ClassCounts {
    std::uint64_t requests = 0, throttled = 0;  // throttled: answered 429
  };
  std::map<std::string, ClassCounts> priority_classes;  // requests of the classes below the first
  // Requests that waited for capacity (a class's max_queue_seconds), by class: how they ended
  // (answered: anything but a 429; refused: a 429 after all; left: the client left before an
  // answer, while it waited or after).
  struct QueueCounts {
    std::uint64_t answered = 0, refused = 0, left = 0;
    double seconds = 0;  // waited, in all
  };
  std::map<std::string, QueueCounts> queues;
  RedisMetrics redis;
  TracingMetrics tracing;
  std::uint64_t in_flight() const { return started > finished ? started - finished : 0; }
  std::uint64_t counter(CounterKind k, std::uint32_t backend, std::uint32_t deployment,
                        std::uint32_t code = 0) const;
  // Index of a deployment label, or -1.
  int deployment_index(std::string_view name) const;
  // The label value of an index ("other" for the fold).
  std::string_view deployment_name(std::uint32_t index) const;
};

class Metrics final : public RequestObserver {
 public:
  static constexpr std::size_t kMaxDeployments = 64;  // distinct label values, then "other"
  static constexpr std::size_t kMaxDeploymentLabelBytes = 128;
  static constexpr std::uint32_t kNoBackend = 0xffff;
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kMaxClients = 256;     // distinct client names, then "other"
  static constexpr std::size_t kMaxCostModels = 256;  // distinct priced models, then "other"

  struct BackendInfo {
    std::string name;
    std::string deployment_override;  // BACKEND_X_DEPLOYMENT_NAME, if any
  };
  // Backends by id (BackendId::value): those of the first configuration.
  explicit Metrics(std::vector<BackendInfo> backends);
  // Backends by id again, after a reload: ids past the known ones get their series. (An id
  // keeps its name for the life of the process; at most kMaxBackends have series.)
  void learn_backends(const std::vector<BackendInfo>& backends);
  static constexpr std::size_t kMaxBackends = 1024;
  ~Metrics() override;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void on_request_start() override;
  void on_request(const RequestRecord& rec) override;
  void on_dns_lookup(std::size_t backend, bool ok) override;
  void on_credential_refresh(const std::string& backend, bool ok) override;

  MetricsSnapshot snapshot() const;

  // A configuration reload (SIGHUP, the file watch) and whether it was taken, at `unix_seconds`.
  void on_config_reload(bool ok, double unix_seconds);

  // Redis (from the Redis thread): shown once enabled.
  void enable_redis() { redis_enabled_.store(true, std::memory_order_relaxed); }
  void on_redis_state(bool up) { redis_up_.store(up, std::memory_order_relaxed); }
  void on_redis_error() { redis_errors_.fetch_add(1, std::memory_order_relaxed); }
  void on_redis_command(double seconds);
  // A lease ask's answer: `granted` of `asked` (shared quotas); no answer: on_lease_failed.
  void on_lease(std::int64_t asked, std::int64_t granted);
  void on_lease_failed() { leases_failed_.fetch_add(1, std::memory_order_relaxed); }
  void on_replicas_live(std::size_t n) { replicas_live_.store(n, std::memory_order_relaxed); }

  // Traces (from the exporter's thread, and workers for a full queue): shown once enabled.
  // `reason`: 0 queue full, 1 export failed, 2 shutdown (tracing::DropReason).
  void enable_tracing() { tracing_enabled_.store(true, std::memory_order_relaxed); }
  void on_spans_exported(std::size_t n) { spans_exported_.fetch_add(n, std::memory_order_relaxed); }
  void on_spans_dropped(unsigned reason, std::size_t n) {
    if (reason < 3) spans_dropped_[reason].fetch_add(n, std::memory_order_relaxed);
  }

  // The label index for a deployment name (interning it if there is room), for tests.
  std::uint32_t deployment_label(std::string_view name);

 private:
  struct Histogram;
  struct HotBackend;
  struct Backend;
  struct Shard;
  class Labels;
  struct ClientCounters;

  Shard& my_shard();
  // Parts of on_request.
  static void count_client(ClientCounters& c, const RequestRecord& rec);
  void count_auth_failure(std::string_view reason);     // a 401
  void count_priority_class(const RequestRecord& rec);  // a request below the first class
  void count_queued(const RequestRecord& rec);          // a request that waited for capacity

  std::unique_ptr<BackendInfo[]> info_;  // kMaxBackends; [0, known_) are set
  std::atomic<std::size_t> known_{0};
  std::mutex learn_mutex_;
  std::unique_ptr<Backend[]> backends_;
  std::unique_ptr<Shard[]> shards_;
  std::unique_ptr<Labels> deployments_;
  std::unique_ptr<Labels> clients_;
  std::unique_ptr<Labels> cost_models_;  // the price table's names: bounded by the configuration
  std::unique_ptr<ClientCounters[]> client_counters_;  // kMaxClients + 1 (the fold)
  mutable std::mutex auth_failures_mutex_;             // a 401 is rare: a map under a lock
  std::map<std::string, std::uint64_t, std::less<>> auth_failures_;
  // Requests of a lower priority class, by class (a handful of names from the configuration).
  mutable std::mutex classes_mutex_;
  std::map<std::string, MetricsSnapshot::ClassCounts, std::less<>> classes_;
  std::map<std::string, MetricsSnapshot::QueueCounts, std::less<>> queues_;  // (classes_mutex_)
  std::atomic<std::uint64_t> reloads_ok_{0}, reloads_failed_{0};
  std::atomic<double> last_reload_success_{0};
  std::atomic<std::uint64_t> folded_{0};
  std::atomic<bool> redis_enabled_{false}, redis_up_{false};
  std::atomic<std::uint64_t> redis_errors_{0}, replicas_live_{0};
  std::atomic<std::uint64_t> leases_full_{0}, leases_short_{0}, leases_failed_{0}, leased_{0};
  std::unique_ptr<Histogram> redis_commands_;
  std::atomic<bool> tracing_enabled_{false};
  std::atomic<std::uint64_t> spans_exported_{0};
  std::atomic<std::uint64_t> spans_dropped_[3] = {};
};

}  // namespace smartlb::telemetry
