// The batch exporter (include/smartlb/tracing/tracer.hpp): a queue the workers fill and one
// thread that empties it into OTLP/HTTP POSTs, each on a new connection (one per batch: at most a
// few a second), through the project's one-shot HTTP client (credentials' fetcher, which the
// token and key-set services use too).
#include "smartlb/tracing/tracer.hpp"

#include <openssl/ssl.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "smartlb/credentials/entra/token_fetcher.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/tracing/otlp_json.hpp"
#include "smartlb/tracing/span_queue.hpp"

namespace smartlb::tracing {

using namespace smartlb::io;
using Steady = std::chrono::steady_clock;

namespace {

std::unique_ptr<ssl::context> exporter_tls(const std::string& upstream_ca_file,
                                           const std::string& certificate) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_default_verify_paths();
  if (!upstream_ca_file.empty()) ctx->load_verify_file(upstream_ca_file);
  if (!certificate.empty()) ctx->load_verify_file(certificate);
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

}  // namespace

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::QueueFull:
      return "queue_full";
    case DropReason::ExportFailed:
      return "export_failed";
    case DropReason::Shutdown:
      return "shutdown";
  }
  return "?";
}

struct Tracer::Exporter {
  Exporter(Tracer& t, const TraceConfig& c, const std::string& upstream_ca_file)
      : tracer(t),
        config(c),
        queue(c.max_queue_spans),
        tls(exporter_tls(upstream_ca_file, c.certificate_file)) {
    resource.attributes = c.resource;
    for (const auto& [key, value] : c.resource)
      if (key == "telemetry.sdk.version") resource.scope_version = value;
    request_headers = c.headers;
    request_headers.emplace_back("Content-Type", "application/json");
  }

  void run();
  // One batch to the collector, waited for at most `timeout` (each step of the exchange).
  void export_batch(const std::vector<Span>& batch, std::chrono::milliseconds timeout);
  void log_failure(const std::string& why, std::size_t spans);

  Tracer& tracer;
  const TraceConfig config;
  Resource resource;
  std::vector<std::pair<std::string, std::string>> request_headers;

  std::mutex mutex;
  std::condition_variable wake;     // the thread: a full batch, a flush, the stop
  std::condition_variable flushed;  // flush() and shutdown(): the thread caught up, or ended
  SpanQueue queue;
  std::atomic<std::size_t> queued{0};  // queue.size(), read without the lock to drop early
  std::uint64_t flush_asked = 0, flush_done = 0;
  bool stopping = false, ended = false;
  Steady::time_point stop_deadline{};

  Steady::time_point last_failure_log{};
  std::uint64_t failures_unlogged = 0;

  std::unique_ptr<ssl::context> tls;
  asio::io_context ioc;  // this thread's own: an export never touches a worker's event loop
  std::thread thread;
};

void Tracer::Exporter::run() {
  std::unique_lock lock(mutex);
  Steady::time_point next = Steady::now() + config.schedule_delay;
  for (;;) {
    wake.wait_until(lock, next, [&] {
      return stopping || flush_asked != flush_done || queue.size() >= config.max_batch_spans;
    });
    const bool timer = Steady::now() >= next;
    const std::uint64_t target = flush_asked;
    const bool everything = stopping || target != flush_done || timer;
    while (!queue.empty() && (everything || queue.size() >= config.max_batch_spans)) {
      std::chrono::milliseconds timeout = config.timeout;
      if (stopping) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(stop_deadline - Steady::now());
        if (left.count() <= 0) break;
        timeout = std::min(timeout, left);
      }
      const std::vector<Span> batch = queue.take(config.max_batch_spans);
      queued.store(queue.size(), std::memory_order_relaxed);
      lock.unlock();
      export_batch(batch, timeout);
      lock.lock();
    }
    if (timer || queue.empty()) next = Steady::now() + config.schedule_delay;
    if (stopping) {
      if (const std::size_t left = queue.size(); left > 0) {
        queue.take(left);
        queued.store(0, std::memory_order_relaxed);
        tracer.count_dropped(DropReason::Shutdown, left);
      }
      ended = true;
      flushed.notify_all();
      return;
    }
    flush_done = target;
    flushed.notify_all();
  }
}

void Tracer::Exporter::export_batch(const std::vector<Span>& batch, std::chrono::milliseconds timeout) {
  // Shared with the exchange's frame, which a shutdown past its bound may leave suspended.
  struct Call {
    credentials::entra::TokenRequest request;
    std::optional<credentials::entra::FetchedAnswer> answer;
  };
  auto call = std::make_shared<Call>();
  call->request.method = "POST";
  call->request.url = config.endpoint;
  call->request.headers = request_headers;
  append_export_request(call->request.form_body, resource, batch);
  asio::co_spawn(
      ioc.get_executor(),
      [call, this, timeout]() -> Task<> {
        call->answer = co_await credentials::entra::fetch_token_answer(call->request, *tls, timeout);
      },
      asio::detached);
  ioc.restart();
  ioc.run();
  const credentials::entra::FetchedAnswer* a = call->answer ? &*call->answer : nullptr;
  if (a && a->status >= 200 && a->status < 300) {
    tracer.exported_.fetch_add(batch.size(), std::memory_order_relaxed);
    if (tracer.hooks_.on_exported) tracer.hooks_.on_exported(batch.size());
    return;
  }
  tracer.count_dropped(DropReason::ExportFailed, batch.size());
  log_failure(!a          ? std::string("stopped")
              : a->status ? "HTTP " + std::to_string(a->status)
                          : a->error,
              batch.size());
}

// A collector that is down would fail every batch: the first failure is logged, then at most
// one line a minute with how many batches failed meanwhile.
void Tracer::Exporter::log_failure(const std::string& why, std::size_t spans) {
  const auto now = Steady::now();
  ++failures_unlogged;
  if (last_failure_log != Steady::time_point{} && now - last_failure_log < std::chrono::minutes(1)) return;
  spdlog::warn(
      "trace export to {} failed ({}): {} span(s) dropped; {} failed export(s) since the last report",
      config.endpoint, why, spans, failures_unlogged);
  last_failure_log = now;
  failures_unlogged = 0;
}

Tracer::Tracer(const TraceConfig& config, const std::string& upstream_ca_file, TracerHooks hooks)
    : sampler_(config.sampler),
      hooks_(std::move(hooks)),
      exporter_(std::make_unique<Exporter>(*this, config, upstream_ca_file)) {
  exporter_->thread = std::thread([e = exporter_.get()] { e->run(); });
}

Tracer::~Tracer() { shutdown(std::chrono::milliseconds(0)); }

void Tracer::count_dropped(DropReason r, std::size_t n) {
  dropped_[static_cast<int>(r)].fetch_add(n, std::memory_order_relaxed);
  if (hooks_.on_dropped) hooks_.on_dropped(r, n);
}

void Tracer::finished(const telemetry::RequestRecord& rec) {
  if (!rec.trace.sampled) return;
  Exporter& e = *exporter_;
  std::size_t n = span_count(rec);
  // A full queue drops the spans before they are made.
  if (e.queued.load(std::memory_order_relaxed) + n > e.queue.capacity()) {
    count_dropped(DropReason::QueueFull, n);
    return;
  }
  std::vector<Span> spans = spans_of(rec);
  bool wake = false;
  {
    std::lock_guard lock(e.mutex);
    if (!e.stopping && e.queue.push(std::move(spans))) {
      e.queued.store(e.queue.size(), std::memory_order_relaxed);
      // Only the request that fills a batch wakes the thread: one notification a batch.
      wake = e.queue.size() >= e.config.max_batch_spans && e.queue.size() - n < e.config.max_batch_spans;
      n = 0;
    }
  }
  if (wake) e.wake.notify_one();
  if (n > 0) count_dropped(DropReason::QueueFull, n);
}

void Tracer::flush() {
  Exporter& e = *exporter_;
  std::unique_lock lock(e.mutex);
  if (e.ended) return;
  const std::uint64_t ticket = ++e.flush_asked;
  e.wake.notify_one();
  e.flushed.wait(lock, [&] { return e.flush_done >= ticket || e.ended; });
}

void Tracer::shutdown(std::chrono::milliseconds bound) {
  Exporter& e = *exporter_;
  {
    std::unique_lock lock(e.mutex);
    if (!e.thread.joinable()) return;
    e.stopping = true;
    e.stop_deadline = Steady::now() + bound;
    e.wake.notify_one();
    // An export already under way has its own timeout: past the bound, its loop is stopped.
    // (Posted, not called: a stop() that came before the export's run() would be undone by its
    // restart(), while a posted one runs first in the next run().)
    if (!e.flushed.wait_until(lock, e.stop_deadline, [&] { return e.ended; }))
      asio::post(e.ioc, [&ioc = e.ioc] { ioc.stop(); });
  }
  e.thread.join();
}

std::unique_ptr<Tracer> make_tracer(const TraceConfig& config, const std::string& upstream_ca_file,
                                    TracerHooks hooks) {
  if (!config.enabled()) return nullptr;
  return std::make_unique<Tracer>(config, upstream_ca_file, std::move(hooks));
}

}  // namespace smartlb::tracing
