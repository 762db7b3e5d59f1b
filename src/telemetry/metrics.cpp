#include "smartlb/telemetry/metrics.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_map>

namespace smartlb::telemetry {
namespace {

constexpr std::uint32_t kOther = static_cast<std::uint32_t>(Metrics::kMaxDeployments);

std::uint64_t pack(CounterKind k, std::uint32_t backend, std::uint32_t deployment, std::uint32_t code) {
  return (std::uint64_t{static_cast<std::uint8_t>(k)} << 48) | (std::uint64_t{backend & 0xffff} << 32) |
         (std::uint64_t{deployment & 0xffff} << 16) | std::uint64_t{code & 0xffff};
}

CounterKey unpack(std::uint64_t v) {
  return {static_cast<CounterKind>((v >> 48) & 0xff), static_cast<std::uint32_t>((v >> 32) & 0xffff),
          static_cast<std::uint32_t>((v >> 16) & 0xffff), static_cast<std::uint32_t>(v & 0xffff)};
}

std::atomic<std::uint32_t> next_thread_slot{0};

}  // namespace

// ---- histogram ---------------------------------------------------------------------------

struct Metrics::Histogram {
  Histogram(const double* b, std::size_t n)
      : bounds(b), n_bounds(n), buckets(std::make_unique<std::atomic<std::uint64_t>[]>(n + 1)) {}

  void observe(double v) {
    const std::size_t i = static_cast<std::size_t>(std::lower_bound(bounds, bounds + n_bounds, v) - bounds);
    buckets[i].fetch_add(1, std::memory_order_relaxed);
    count.fetch_add(1, std::memory_order_relaxed);
    sum_micros.fetch_add(v > 0 ? static_cast<std::uint64_t>(v * 1e6 + 0.5) : 0, std::memory_order_relaxed);
  }

  HistogramSnapshot snapshot() const {
    HistogramSnapshot s;
    s.buckets.resize(n_bounds + 1);
    for (std::size_t i = 0; i <= n_bounds; ++i) s.buckets[i] = buckets[i].load(std::memory_order_relaxed);
    // Scrapes race with updates: make count agree with the buckets so the text stays valid.
    s.count = 0;
    for (auto c : s.buckets) s.count += c;
    s.sum = static_cast<double>(sum_micros.load(std::memory_order_relaxed)) / 1e6;
    return s;
  }

  const double* bounds;
  std::size_t n_bounds;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets;
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> sum_micros{0};
};

double HistogramSnapshot::quantile(double q, const double* bounds, std::size_t n_bounds) const {
  if (count == 0 || buckets.empty()) return 0;
  const double rank = q * static_cast<double>(count);
  double seen = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const double next = seen + static_cast<double>(buckets[i]);
    if (next >= rank && buckets[i] > 0) {
      if (i >= n_bounds) return n_bounds ? bounds[n_bounds - 1] : 0;  // +Inf: the last bound
      const double lo = i == 0 ? 0 : bounds[i - 1];
      const double hi = bounds[i];
      return lo + (hi - lo) * ((rank - seen) / static_cast<double>(buckets[i]));
    }
    seen = next;
  }
  return n_bounds ? bounds[n_bounds - 1] : 0;
}

// A histogram kept per shard: updated by its shard's thread(s), summed by a scrape.
template <std::size_t N>
struct ShardHistogram {
  void observe(const std::array<double, N>& bounds, double v) {
    const auto i =
        static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin());
    buckets[i].fetch_add(1, std::memory_order_relaxed);
    sum_micros.fetch_add(v > 0 ? static_cast<std::uint64_t>(v * 1e6 + 0.5) : 0, std::memory_order_relaxed);
  }
  // Adds this shard's counts to `s` (whose buckets are sized N + 1).
  void add_to(HistogramSnapshot& s) const {
    for (std::size_t i = 0; i <= N; ++i) {
      const std::uint64_t c = buckets[i].load(std::memory_order_relaxed);
      s.buckets[i] += c;
      s.count += c;  // from the buckets, so that a scrape racing an update stays consistent
    }
    s.sum += static_cast<double>(sum_micros.load(std::memory_order_relaxed)) / 1e6;
  }

  std::array<std::atomic<std::uint64_t>, N + 1> buckets{};
  std::atomic<std::uint64_t> sum_micros{0};
};

template <std::size_t N>
HistogramSnapshot empty_histogram() {
  HistogramSnapshot s;
  s.buckets.assign(N + 1, 0);
  return s;
}

// ---- per-backend series -------------------------------------------------------------------

// What requests add to a backend's series on every request, kept per shard: worker threads
// adding to one backend's counters would otherwise pass its cache lines between cores on
// every request (the top user-space symbol at 8 cores before, bench/multicore.sh).
struct Metrics::HotBackend {
  std::atomic<std::uint64_t> attempts{0}, served{0}, errors{0}, throttled{0}, upstream_aborted{0}, prompt{0},
      completion{0};
  ShardHistogram<kDurationBuckets.size()> duration;
  ShardHistogram<kTtfbBuckets.size()> ttfb;
};

// What is rare (failures' details, lookups, credentials): shared.
struct alignas(64) Metrics::Backend {
  std::atomic<std::uint64_t> dns_lookups{0}, dns_failures{0}, credential_ok{0}, credential_failed{0};
  std::atomic<std::uint8_t> last_cause{0};
  std::atomic<unsigned> last_status{0};
  std::atomic<std::uint32_t> last_deployment{0};
  std::atomic<base::MonoNanos> last_at{0};
};

// ---- labelled counters, one shard per thread (modulo kShards) ------------------------------

struct alignas(64) Metrics::Shard {
  static constexpr std::size_t kChunk = 64;  // backends per allocation, made on first use
  struct Chunk {
    HotBackend backends[kChunk];
  };

  Shard() = default;
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;
  ~Shard() {
    for (auto& c : chunks) delete c.load(std::memory_order_relaxed);
  }

  HotBackend& backend(std::size_t id) {
    std::atomic<Chunk*>& slot = chunks[id / kChunk];
    Chunk* c = slot.load(std::memory_order_acquire);
    if (!c) {
      // Two threads may share a shard (more threads than shards): the first to publish wins.
      auto made = std::make_unique<Chunk>();
      if (slot.compare_exchange_strong(c, made.get(), std::memory_order_acq_rel)) c = made.release();
    }
    return c->backends[id % kChunk];
  }
  const HotBackend* find(std::size_t id) const {
    const Chunk* c = chunks[id / kChunk].load(std::memory_order_acquire);
    return c ? &c->backends[id % kChunk] : nullptr;
  }

  std::mutex mutex;  // taken by its own thread, and by a scrape
  std::unordered_map<std::uint64_t, std::uint64_t> counters;
  std::atomic<std::uint64_t> started{0}, finished{0}, client_aborted{0};
  ShardHistogram<kAttemptBuckets.size()> attempts;
  std::array<std::atomic<Chunk*>, Metrics::kMaxBackends / kChunk> chunks{};
};

Metrics::Shard& Metrics::my_shard() {
  thread_local const std::uint32_t slot = next_thread_slot.fetch_add(1, std::memory_order_relaxed);
  return shards_[slot % kShards];
}

// ---- deployment labels: lock-free lookups, a mutex only to add one --------------------------

// Label values interned on first sight, up to a bound (then kOther's fold); found without a
// lock. For deployments (named by clients) and client names.
class Metrics::Labels {
 public:
  Labels(std::size_t max, std::size_t max_bytes)
      : max_(static_cast<std::uint32_t>(max)),
        max_bytes_(max_bytes),
        slots_(std::make_unique<std::atomic<const std::string*>[]>(max)) {
    owned_.reserve(max);
  }

  // The label index of `name`; `max` (the fold) once the table is full.
  std::uint32_t find_or_add(std::string_view name, bool* folded) {
    if (name.size() > max_bytes_) name = name.substr(0, max_bytes_);
    if (auto i = find(name)) return *i;
    std::lock_guard lock(mutex_);
    if (auto i = find(name)) return *i;
    const std::uint32_t n = count_.load(std::memory_order_relaxed);
    if (n >= max_) {
      if (folded) *folded = true;
      return max_;
    }
    owned_.push_back(std::make_unique<std::string>(name));
    slots_[n].store(owned_.back().get(), std::memory_order_relaxed);
    count_.store(n + 1, std::memory_order_release);
    return n;
  }

  std::vector<std::string> names() const {
    const std::uint32_t n = count_.load(std::memory_order_acquire);
    std::vector<std::string> out;
    out.reserve(n + 1);
    for (std::uint32_t i = 0; i < n; ++i) out.push_back(*slots_[i].load(std::memory_order_relaxed));
    return out;
  }

 private:
  std::optional<std::uint32_t> find(std::string_view name) const {
    const std::uint32_t n = count_.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < n; ++i)
      if (*slots_[i].load(std::memory_order_relaxed) == name) return i;
    return std::nullopt;
  }

  const std::uint32_t max_;
  const std::size_t max_bytes_;
  std::unique_ptr<std::atomic<const std::string*>[]> slots_;
  std::atomic<std::uint32_t> count_{0};
  std::mutex mutex_;
  std::vector<std::unique_ptr<std::string>> owned_;
};

// A client's counters (by label index; the last one is the fold of clients past kMaxClients).
struct Metrics::ClientCounters {
  std::atomic<std::uint64_t> requests{0}, throttled{0}, limited{0}, prompt{0}, completion{0};
};

// ---- Metrics ------------------------------------------------------------------------------

Metrics::Metrics(std::vector<BackendInfo> backends)
    : info_(std::make_unique<BackendInfo[]>(kMaxBackends)),
      backends_(std::make_unique<Backend[]>(kMaxBackends)),
      shards_(std::make_unique<Shard[]>(kShards)),
      deployments_(std::make_unique<Labels>(kMaxDeployments, kMaxDeploymentLabelBytes)),
      clients_(std::make_unique<Labels>(kMaxClients, kMaxDeploymentLabelBytes)),
      cost_models_(std::make_unique<Labels>(kMaxCostModels, kMaxDeploymentLabelBytes)),
      client_counters_(std::make_unique<ClientCounters[]>(kMaxClients + 1)),
      redis_commands_(std::make_unique<Histogram>(kRedisBuckets.data(), kRedisBuckets.size())) {
  learn_backends(backends);
}

void Metrics::learn_backends(const std::vector<BackendInfo>& backends) {
  std::lock_guard lock(learn_mutex_);
  const std::size_t known = known_.load(std::memory_order_relaxed);
  const std::size_t n = std::min(backends.size(), kMaxBackends);
  if (n <= known) return;
  for (std::size_t i = known; i < n; ++i) {
    info_[i] = backends[i];
    // Fixed deployments are known up front: intern them first so they always have a label.
    if (!info_[i].deployment_override.empty())
      deployments_->find_or_add(info_[i].deployment_override, nullptr);
  }
  known_.store(n, std::memory_order_release);  // the entries above are written first
}

Metrics::~Metrics() = default;

std::uint32_t Metrics::deployment_label(std::string_view name) {
  return deployments_->find_or_add(name, nullptr);
}

void Metrics::on_redis_command(double seconds) { redis_commands_->observe(seconds); }

void Metrics::on_lease(std::int64_t asked, std::int64_t granted) {
  (granted < asked ? leases_short_ : leases_full_).fetch_add(1, std::memory_order_relaxed);
  if (granted > 0) leased_.fetch_add(static_cast<std::uint64_t>(granted), std::memory_order_relaxed);
}

void Metrics::on_config_reload(bool ok, double unix_seconds) {
  if (!ok) {
    reloads_failed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  reloads_ok_.fetch_add(1, std::memory_order_relaxed);
  last_reload_success_.store(unix_seconds, std::memory_order_relaxed);
}

void Metrics::on_request_start() { my_shard().started.fetch_add(1, std::memory_order_relaxed); }

void Metrics::on_request(const RequestRecord& rec) {
  Shard& shard = my_shard();
  shard.finished.fetch_add(1, std::memory_order_relaxed);
  if (rec.client_aborted) shard.client_aborted.fetch_add(1, std::memory_order_relaxed);

  bool folded = false;
  const std::uint32_t requested = deployments_->find_or_add(rec.deployment, &folded);
  if (folded) folded_.fetch_add(1, std::memory_order_relaxed);
  // An attempt is labelled with the deployment its backend was asked for: the name its
  // cooldowns and quotas are kept under, as /status and the state gauges show them.
  const auto deployment_of = [&](const AttemptRecord& a) {
    if (a.deployment.empty() || a.deployment == rec.deployment) return requested;
    bool other = false;
    const std::uint32_t d = deployments_->find_or_add(a.deployment, &other);
    if (other) folded_.fetch_add(1, std::memory_order_relaxed);
    return d;
  };

  // Collect the labelled increments, then take this thread's shard lock once.
  struct Inc {
    std::uint64_t key;
    std::uint64_t by;
  };
  std::array<Inc, RequestRecord::kMaxAttempts * 4 + 5> incs;
  std::size_t n_incs = 0;
  const auto add = [&](CounterKind k, std::uint32_t b, std::uint32_t d, std::uint32_t code,
                       std::uint64_t by) {
    incs[n_incs++] = {pack(k, b, d, code), by};
  };

  const std::size_t known = known_.load(std::memory_order_acquire);
  const std::size_t shown = std::min(rec.attempt_count, RequestRecord::kMaxAttempts);
  for (std::size_t i = 0; i < shown; ++i) {
    const AttemptRecord& a = rec.attempts[i];
    if (a.backend >= known) continue;
    HotBackend& H = shard.backend(a.backend);
    const auto b = static_cast<std::uint32_t>(a.backend);
    H.attempts.fetch_add(1, std::memory_order_relaxed);
    if (a.status != 0) H.ttfb.observe(kTtfbBuckets, static_cast<double>(a.ttfb_us) / 1e6);
    // A response head (by status), or a transport failure (by cause). An attempt with
    // neither has nothing to count.
    if (a.status != 0 || a.cause != routing::FailureCause::None)
      add(CounterKind::UpstreamResponses, b, 0, upstream_response_code(a.status, a.cause), 1);
    if (a.cause == routing::FailureCause::None) continue;
    const std::uint32_t d = deployment_of(a);
    H.errors.fetch_add(1, std::memory_order_relaxed);
    if (is_rate_limit(a.cause)) H.throttled.fetch_add(1, std::memory_order_relaxed);
    Backend& B = backends_[a.backend];
    B.last_cause.store(static_cast<std::uint8_t>(a.cause), std::memory_order_relaxed);
    B.last_status.store(a.status, std::memory_order_relaxed);
    B.last_deployment.store(d, std::memory_order_relaxed);
    B.last_at.store(rec.end, std::memory_order_relaxed);
    add(CounterKind::Failovers, b, d, static_cast<std::uint32_t>(a.cause), 1);
    if (a.cooldown_ms > 0) add(CounterKind::CooldownsStarted, b, d, static_cast<std::uint32_t>(a.cause), 1);
    if (a.breaker_tripped)
      add(CounterKind::CooldownsStarted, b, d,
          static_cast<std::uint32_t>(routing::FailureCause::FailureTolerance), 1);
  }
  if (rec.attempt_count > 0) shard.attempts.observe(kAttemptBuckets, static_cast<double>(rec.attempt_count));

  const bool served = rec.served_by >= 0 && static_cast<std::size_t>(rec.served_by) < known;
  const std::uint32_t sb = served ? static_cast<std::uint32_t>(rec.served_by) : kNoBackend;
  // The served attempt is the last one.
  const std::uint32_t sd = served && shown > 0 ? deployment_of(rec.attempts[shown - 1]) : requested;
  add(CounterKind::Requests, sb, sd, rec.status, 1);
  if (rec.status == 429)
    add(CounterKind::ClientThrottled, kNoBackend, requested, rec.client_limited ? 1 : 0, 1);
  if (!rec.auth_failure.empty()) count_auth_failure(rec.auth_failure);
  if (!rec.priority_class.empty()) count_priority_class(rec);
  if (rec.queued_ms >= 0) count_queued(rec);
  if (!rec.client.empty()) {
    const std::uint32_t client = clients_->find_or_add(rec.client, nullptr);
    if (rec.cost > 0)
      add(CounterKind::Cost, sb, cost_models_->find_or_add(rec.cost_model, nullptr), client,
          static_cast<std::uint64_t>(rec.cost));
    count_client(client_counters_[client], rec);
  }
  if (served) {
    HotBackend& B = shard.backend(sb);
    B.served.fetch_add(1, std::memory_order_relaxed);
    B.duration.observe(kDurationBuckets, static_cast<double>(rec.end - rec.start) / 1e9);
    if (rec.upstream_aborted) {
      B.upstream_aborted.fetch_add(1, std::memory_order_relaxed);
      B.errors.fetch_add(1, std::memory_order_relaxed);
    }
    if (rec.prompt_tokens > 0) {
      B.prompt.fetch_add(static_cast<std::uint64_t>(rec.prompt_tokens), std::memory_order_relaxed);
      add(CounterKind::PromptTokens, sb, sd, 0, static_cast<std::uint64_t>(rec.prompt_tokens));
    }
    if (rec.completion_tokens > 0) {
      B.completion.fetch_add(static_cast<std::uint64_t>(rec.completion_tokens), std::memory_order_relaxed);
      add(CounterKind::CompletionTokens, sb, sd, 0, static_cast<std::uint64_t>(rec.completion_tokens));
    }
  }

  std::lock_guard lock(shard.mutex);
  for (std::size_t i = 0; i < n_incs; ++i) shard.counters[incs[i].key] += incs[i].by;
}

void Metrics::count_client(ClientCounters& C, const RequestRecord& rec) {
  C.requests.fetch_add(1, std::memory_order_relaxed);
  if (rec.status == 429) C.throttled.fetch_add(1, std::memory_order_relaxed);
  if (rec.client_limited) C.limited.fetch_add(1, std::memory_order_relaxed);
  if (rec.prompt_tokens > 0)
    C.prompt.fetch_add(static_cast<std::uint64_t>(rec.prompt_tokens), std::memory_order_relaxed);
  if (rec.completion_tokens > 0)
    C.completion.fetch_add(static_cast<std::uint64_t>(rec.completion_tokens), std::memory_order_relaxed);
}

void Metrics::count_auth_failure(std::string_view reason) {
  std::lock_guard lock(auth_failures_mutex_);
  if (auto it = auth_failures_.find(reason); it != auth_failures_.end())
    ++it->second;
  else if (auth_failures_.size() < 64)  // the labels are a fixed set; the bound is a seatbelt
    auth_failures_.emplace(std::string(reason), 1);
}

void Metrics::count_priority_class(const RequestRecord& rec) {
  std::lock_guard lock(classes_mutex_);
  auto it = classes_.find(rec.priority_class);
  if (it == classes_.end() && classes_.size() < 64)  // classes are few; a reload may rename them
    it = classes_.emplace(std::string(rec.priority_class), MetricsSnapshot::ClassCounts{}).first;
  if (it != classes_.end()) {
    ++it->second.requests;
    if (rec.status == 429) ++it->second.throttled;
  }
}

void Metrics::count_queued(const RequestRecord& rec) {
  std::lock_guard lock(classes_mutex_);
  auto it = queues_.find(rec.queue_class);
  if (it == queues_.end() && queues_.size() < 64)  // classes are few; a reload may rename them
    it = queues_.emplace(std::string(rec.queue_class), MetricsSnapshot::QueueCounts{}).first;
  if (it == queues_.end()) return;
  MetricsSnapshot::QueueCounts& q = it->second;
  ++(rec.client_aborted && rec.status == 0 ? q.left : rec.status == 429 ? q.refused : q.answered);
  q.seconds += static_cast<double>(rec.queued_ms) / 1000.0;
}

void Metrics::on_dns_lookup(std::size_t backend, bool ok) {
  if (backend >= known_.load(std::memory_order_acquire)) return;
  Backend& B = backends_[backend];
  B.dns_lookups.fetch_add(1, std::memory_order_relaxed);
  if (!ok) B.dns_failures.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::on_credential_refresh(const std::string& backend, bool ok) {
  // A few times an hour: a look-up by name is fine.
  const std::size_t known = known_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < known; ++i)
    if (info_[i].name == backend) (ok ? backends_[i].credential_ok : backends_[i].credential_failed)++;
}

MetricsSnapshot Metrics::snapshot() const {
  MetricsSnapshot s;
  // Finished before started: a request that starts and ends between the two loads must
  // not make in_flight negative (it is clamped anyway).
  s.attempts = empty_histogram<kAttemptBuckets.size()>();
  for (std::size_t i = 0; i < kShards; ++i) {
    const Shard& sh = shards_[i];
    s.finished += sh.finished.load(std::memory_order_relaxed);
    s.client_aborted += sh.client_aborted.load(std::memory_order_relaxed);
    sh.attempts.add_to(s.attempts);
  }
  for (std::size_t i = 0; i < kShards; ++i) s.started += shards_[i].started.load(std::memory_order_relaxed);
  s.reloads_ok = reloads_ok_.load(std::memory_order_relaxed);
  s.reloads_failed = reloads_failed_.load(std::memory_order_relaxed);
  s.last_reload_success = last_reload_success_.load(std::memory_order_relaxed);
  s.deployments_folded = folded_.load(std::memory_order_relaxed);
  s.deployments = deployments_->names();
  {
    std::lock_guard lock(auth_failures_mutex_);
    s.auth_failures.insert(auth_failures_.begin(), auth_failures_.end());
  }
  {
    std::lock_guard lock(classes_mutex_);
    s.priority_classes.insert(classes_.begin(), classes_.end());
    s.queues.insert(queues_.begin(), queues_.end());
  }
  s.cost_models = cost_models_->names();
  const std::vector<std::string> clients = clients_->names();
  for (std::size_t i = 0; i <= clients.size() && i <= kMaxClients; ++i) {
    const ClientCounters& C = client_counters_[i];
    ClientMetrics c;
    c.name = i < clients.size() ? clients[i] : "other";
    c.requests = C.requests.load(std::memory_order_relaxed);
    if (i == clients.size() && c.requests == 0) break;  // no fold
    c.throttled = C.throttled.load(std::memory_order_relaxed);
    c.limited = C.limited.load(std::memory_order_relaxed);
    c.prompt_tokens = C.prompt.load(std::memory_order_relaxed);
    c.completion_tokens = C.completion.load(std::memory_order_relaxed);
    s.clients.push_back(std::move(c));
  }
  s.redis.enabled = redis_enabled_.load(std::memory_order_relaxed);
  s.redis.up = redis_up_.load(std::memory_order_relaxed);
  s.redis.errors = redis_errors_.load(std::memory_order_relaxed);
  s.redis.replicas_live = replicas_live_.load(std::memory_order_relaxed);
  s.redis.commands = redis_commands_->snapshot();
  s.redis.leases_full = leases_full_.load(std::memory_order_relaxed);
  s.redis.leases_short = leases_short_.load(std::memory_order_relaxed);
  s.redis.leases_failed = leases_failed_.load(std::memory_order_relaxed);
  s.redis.leased = leased_.load(std::memory_order_relaxed);
  s.tracing.enabled = tracing_enabled_.load(std::memory_order_relaxed);
  s.tracing.exported = spans_exported_.load(std::memory_order_relaxed);
  s.tracing.dropped_queue_full = spans_dropped_[0].load(std::memory_order_relaxed);
  s.tracing.dropped_export_failed = spans_dropped_[1].load(std::memory_order_relaxed);
  s.tracing.dropped_shutdown = spans_dropped_[2].load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kShards; ++i) {
    Shard& sh = shards_[i];
    std::lock_guard lock(sh.mutex);
    for (const auto& [k, v] : sh.counters) s.counters[unpack(k)] += v;
  }
  const std::size_t known = known_.load(std::memory_order_acquire);
  s.backends.resize(known);
  for (std::size_t i = 0; i < known; ++i) {
    const Backend& B = backends_[i];
    BackendMetrics& m = s.backends[i];
    s.backend_names.push_back(info_[i].name);
    m.duration = empty_histogram<kDurationBuckets.size()>();
    m.ttfb = empty_histogram<kTtfbBuckets.size()>();
    for (std::size_t k = 0; k < kShards; ++k) {
      const HotBackend* H = shards_[k].find(i);
      if (!H) continue;
      m.attempts += H->attempts.load(std::memory_order_relaxed);
      m.served += H->served.load(std::memory_order_relaxed);
      m.errors += H->errors.load(std::memory_order_relaxed);
      m.throttled += H->throttled.load(std::memory_order_relaxed);
      m.upstream_aborted += H->upstream_aborted.load(std::memory_order_relaxed);
      m.prompt_tokens += H->prompt.load(std::memory_order_relaxed);
      m.completion_tokens += H->completion.load(std::memory_order_relaxed);
      H->duration.add_to(m.duration);
      H->ttfb.add_to(m.ttfb);
    }
    m.dns_lookups = B.dns_lookups.load(std::memory_order_relaxed);
    m.dns_failures = B.dns_failures.load(std::memory_order_relaxed);
    m.credential_refreshes_ok = B.credential_ok.load(std::memory_order_relaxed);
    m.credential_refreshes_failed = B.credential_failed.load(std::memory_order_relaxed);
    m.last_error.at = B.last_at.load(std::memory_order_relaxed);
    if (m.last_error.at != 0) {
      m.last_error.cause = static_cast<routing::FailureCause>(B.last_cause.load(std::memory_order_relaxed));
      m.last_error.status = B.last_status.load(std::memory_order_relaxed);
      const auto d = B.last_deployment.load(std::memory_order_relaxed);
      m.last_error.deployment = s.deployment_name(d);
    }
  }
  return s;
}

std::uint64_t MetricsSnapshot::counter(CounterKind k, std::uint32_t backend, std::uint32_t deployment,
                                       std::uint32_t code) const {
  auto it = counters.find(CounterKey{k, backend, deployment, code});
  return it == counters.end() ? 0 : it->second;
}

int MetricsSnapshot::deployment_index(std::string_view name) const {
  for (std::size_t i = 0; i < deployments.size(); ++i)
    if (deployments[i] == name) return static_cast<int>(i);
  return -1;
}

std::string_view MetricsSnapshot::deployment_name(std::uint32_t index) const {
  if (index < deployments.size()) return deployments[index];
  return index == Metrics::kMaxDeployments ? std::string_view("other") : std::string_view();
}

}  // namespace smartlb::telemetry
