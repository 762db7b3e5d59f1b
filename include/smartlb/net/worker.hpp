#pragma once
// A worker thread's world: its io_context, acceptor, upstream pool, snapshot cache, random
// source and loggers. Everything here is touched only from that thread; `Shared` is what all
// workers share (process settings, the published snapshot, the lock-free backend states,
// atomic counters).
#include <array>
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "smartlb/base/random.hpp"
#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/clients/jwt/verified_token_cache.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/net/upstream.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/failure_breakers.hpp"
#include "smartlb/routing/latency_stats.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {
using namespace smartlb::io;     // the Asio/Beast vocabulary (io/beast.hpp)
using namespace smartlb::http1;  // messages as the proxied path parses them

struct Shared {
  Shared(const Config& c, const Published<Snapshot>& p, BackendStates& s, LatencyStats& l, const Clock& k,
         ssl::context& t, RequestObserver* o)
      : cfg(c), published(p), states(s), latency(l), clock(k), tls(t), observer(o) {}

  const Config& cfg;  // process settings (listeners, timeouts, limits); backends come from snapshots
  const Published<Snapshot>& published;
  BackendStates& states;
  LatencyStats& latency;     // latency rules' samples (survive reloads, like `states`)
  FailureBreakers breakers;  // failure_tolerance counts (survive reloads, like `states`)
  const Clock& clock;
  ssl::context& tls;
  RequestObserver* observer = nullptr;  // metrics; may be null
  std::atomic<std::size_t> connections{0};
  std::atomic<bool> draining{false};
  std::function<void()> on_drained;  // called (from any worker) when the last connection ends
};

// One client connection's registration, so a drain can wake it while it idles.
struct SessionEntry {
  TimedSocket* stream = nullptr;
  bool idle = false;
};

// An io_context whose services (and so the coroutine frames of pending operations) can be
// shut down before the Worker members those frames refer to are destroyed.
class WorkerContext : public asio::io_context {
 public:
  // One thread runs it, and only that thread starts or completes I/O on its sockets: the
  // reactor's per-socket locks can go (the scheduler keeps its lock for posts from other
  // threads, such as the drain and the resolver's completions).
  WorkerContext() : asio::io_context(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO) {}
  using asio::io_context::shutdown;
};

// The relay's per-write arrays. Not in its coroutine frame: Asio recycles frames of up to 1020
// bytes only, and a larger one costs an aligned_alloc and a free per response. Not on the
// connection either: only a response being relayed needs them, so the worker lends them out
// (RelayScratchLease) and an idle keep-alive connection holds none.
struct RelayScratch {
  // At most this many runs of body bytes (chunks, mostly) already buffered go out in one write.
  static constexpr std::size_t kMaxRunsPerWrite = 16;
  std::array<std::string_view, kMaxRunsPerWrite> runs;       // body bytes of one write
  std::array<asio::const_buffer, kMaxRunsPerWrite + 4> out;  // [head] [size line] runs [CRLF] [last]
  std::string held;  // an event stream's start, held back until its first event (forwarder)
};

struct Worker {
  Worker(Shared& s, std::size_t idx, std::uint64_t seed);
  ~Worker();

  Shared& shared;
  std::size_t index;
  std::uint64_t origins_generation = 0;  // the snapshot whose backend URLs the pool was synced to
  WorkerContext ioc;
  DeadlineSweeper sweeper{ioc};
  std::optional<Acceptor> acceptor;
  UpstreamPool upstreams;
  SnapshotCache snapshots;
  jwt::VerifiedTokenCache verified_tokens;  // clients' Entra ID tokens this worker has checked
  FastRandom rng;
  std::shared_ptr<spdlog::logger> access_log;  // null when ACCESS_LOG=off
  std::list<SessionEntry*> sessions;
  std::vector<std::unique_ptr<RelayScratch>> spare_scratch;  // lent out by RelayScratchLease
  bool draining = false;

  // Called on this worker's thread when a drain begins.
  void begin_drain();
};

// A RelayScratch borrowed from a worker's spares (Worker::spare_scratch) for as long as this
// lives (a relay). At most kMaxSpare are kept after a burst of concurrent relays (streams).
class RelayScratchLease {
 public:
  using Spares = std::vector<std::unique_ptr<RelayScratch>>;
  static constexpr std::size_t kMaxSpare = 256;

  explicit RelayScratchLease(Spares& spares) : spares_(spares) {
    if (spares_.empty()) {
      scratch_ = std::make_unique<RelayScratch>();
    } else {
      scratch_ = std::move(spares_.back());
      spares_.pop_back();
    }
  }
  ~RelayScratchLease() {
    if (spares_.size() >= kMaxSpare) return;
    try {
      spares_.push_back(std::move(scratch_));
    } catch (...) {  // no room to keep it: it is freed instead
    }
  }
  RelayScratchLease(const RelayScratchLease&) = delete;
  RelayScratchLease& operator=(const RelayScratchLease&) = delete;
  RelayScratch* operator->() { return scratch_.get(); }
  RelayScratch* get() { return scratch_.get(); }

 private:
  Spares& spares_;
  std::unique_ptr<RelayScratch> scratch_;
};

// Reads requests on one client connection until it closes.
Task<> run_client_session(Worker& w, Socket socket);

// Stamps the end time, writes the access-log line and tells the observer.
void finish_request(Worker& w, RequestRecord& rec);

// Forwards one request and writes the response. Returns whether the client connection may
// carry another request.
// Buffers a client connection lends to each request it forwards, so that message heads
// allocate nothing in steady state.
struct ForwardBuffers {
  std::string passed_fields;  // the client's fields that go upstream unchanged
  std::string request_head;   // rebuilt for each attempt
  std::string response_head;
  std::string edited_body;                // the body with a target's overrides, when it has some
  std::vector<MetadataPair> metadata;     // x-smartlb-metadata's members
  std::string budget_fields;              // x-ratelimit-* of the caller's budgets
  std::optional<BudgetAdmission> budget;  // the request's charges to them
};

// `snapshot` is the configuration the request routes with, from its start to its end;
// `caller` is who sent it (its subjects for the rules, its budgets).
Task<bool> forward_request(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
                           const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
                           ForwardBuffers& buffers);

}  // namespace smartlb::net
