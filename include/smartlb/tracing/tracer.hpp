#pragma once
// Tracing as the daemon runs it: the sampler the request path asks, and the batch exporter
// behind it -- a bounded queue and one background thread with its own io_context that POSTs
// OTLP/JSON batches (at most max_batch_spans, or what schedule_delay gathered) to the
// collector. Made only when tracing is on: off, there is no Tracer, no thread, nothing queued.
// A finished request never waits on the exporter: a full queue drops its spans, a failed or
// slow export drops its batch, and both are counted. No Asio in this header.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "smartlb/telemetry/request_record.hpp"
#include "smartlb/tracing/sampler.hpp"
#include "smartlb/tracing/trace_config.hpp"

namespace smartlb::tracing {

enum class DropReason : std::uint8_t {
  QueueFull,     // the queue held max_queue_spans (the collector is slower than the traffic)
  ExportFailed,  // the collector did not take the batch (down, refused, timed out)
  Shutdown,      // still queued when the flush on SIGTERM ran out of time
};
std::string_view to_string(DropReason r);

struct TracerHooks {
  std::function<void(std::size_t spans)> on_exported;             // the exporter's thread
  std::function<void(DropReason, std::size_t spans)> on_dropped;  // any thread
};

class Tracer {
 public:
  // Starts the exporter's thread. `config.enabled()` must hold. `upstream_ca_file`:
  // UPSTREAM_CA_FILE, trusted for an https collector beside the system's CAs and
  // OTEL_EXPORTER_OTLP_CERTIFICATE.
  Tracer(const TraceConfig& config, const std::string& upstream_ca_file, TracerHooks hooks = {});
  ~Tracer();  // shutdown(0) if it was not called
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  const Sampler& sampler() const { return sampler_; }

  // A request ended (a worker thread): a sampled one's spans are queued, or dropped and counted
  // when the queue is full. Never blocks on an export.
  void finished(const telemetry::RequestRecord& rec);
  // Exports everything queued now and waits until that is done (tests).
  void flush();
  // SIGTERM, after the drain: exports what is queued within `bound` (what is left then is
  // dropped and counted), and stops the thread.
  void shutdown(std::chrono::milliseconds bound);

  std::uint64_t exported() const { return exported_.load(std::memory_order_relaxed); }
  std::uint64_t dropped(DropReason r) const {
    return dropped_[static_cast<int>(r)].load(std::memory_order_relaxed);
  }

 private:
  struct Exporter;
  void count_dropped(DropReason r, std::size_t n);

  Sampler sampler_;
  TracerHooks hooks_;
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> dropped_[3] = {};
  std::unique_ptr<Exporter> exporter_;
};

// A Tracer when `config` has tracing on, else null (and no thread).
std::unique_ptr<Tracer> make_tracer(const TraceConfig& config, const std::string& upstream_ca_file,
                                    TracerHooks hooks = {});

}  // namespace smartlb::tracing
