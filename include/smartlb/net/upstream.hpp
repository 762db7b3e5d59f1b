#pragma once
// Connections to backends: one keep-alive pool per worker thread (so a pooled connection
// always runs on the executor it was made on, and the pool needs no lock).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/io/tls_socket.hpp"
#include "smartlb/net/io_vocabulary.hpp"
#include "smartlb/net/resolve_cache.hpp"
#include "smartlb/net/spare_rooms.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

class UpstreamConnection {
 public:
  using Plain = io::TimedSocket;
  using Tls = io::TlsSocket;

  UpstreamConnection(io::DeadlineSweeper& sweeper, routing::BackendId backend);                     // plain
  UpstreamConnection(io::DeadlineSweeper& sweeper, ssl::context& ctx, routing::BackendId backend);  // TLS

  io::TimedSocket& tcp();
  Tls* tls() { return std::get_if<Tls>(&stream_); }
  // Runs `op(stream)` on whichever stream this is; both alternatives give the same type.
  template <class Op>
  auto visit(Op&& op) {
    return std::visit(std::forward<Op>(op), stream_);
  }
  // Closes the socket at once (no TLS close_notify round trip: we are discarding it).
  void close();
  // What the connection holds now, read without waiting (io::read_now; decrypted, for TLS): for
  // one a wait has just found readable. `ec` would_block when there is nothing whole yet.
  std::size_t read_now(asio::mutable_buffer b, error_code& ec);
  // Nothing has reached the connection since a read emptied it, and its TLS layer (if any)
  // holds no byte: a wait for its next bytes may hold no buffer (io/draining_read.hpp).
  bool known_quiet();

  // What `buffer` holds room for when made or pooled: Beast reads into what the buffer has room
  // for, starting at 512 bytes, so a typical response head plus JSON body would take several
  // reads (and, relayed, several writes).
  static constexpr std::size_t kBufferBytes = 16 * 1024;

  routing::BackendId backend;
  beast::flat_buffer buffer;  // bytes read past one response belong to the connection
  http1::ResponseHead head;   // the response being read, refilled for each
  bool reused = false;        // came from the pool (so it may have gone stale)
  base::MonoNanos idle_since = 0;

 private:
  std::variant<Plain, Tls> stream_;
};

using UpstreamPtr = std::unique_ptr<UpstreamConnection>;

struct ConnectResult {
  UpstreamPtr conn;
  routing::TransportFailure failure = routing::TransportFailure::Connect;  // meaningful when !conn
  std::string detail;                                                      // for logs
};

class UpstreamPool {
 public:
  using Endpoints = std::vector<tcp::endpoint>;
  // Turns a host name into addresses (empty, with `error` set, on failure). The default is the
  // system resolver (getaddrinfo on Asio's resolver thread); tests substitute their own.
  using LookupFn =
      std::function<Task<Endpoints>(const std::string& host, std::uint16_t port, error_code& error)>;

  // `observer` (may be null) is told of every host-name lookup. `cfg` gives the timeouts.
  UpstreamPool(io::DeadlineSweeper& sweeper, const config::Config& cfg, ssl::context& tls,
               const base::Clock& clock, telemetry::RequestObserver* observer = nullptr,
               LookupFn lookup = {});

  // A live pooled connection to backend `id`, or null. Not a coroutine: the usual case (a
  // pooled connection) costs no coroutine frame; connect() is awaited only when it is null.
  UpstreamPtr take_pooled(routing::BackendId id);
  // A new connection to backend `id` at `url` (resolve, connect, TLS handshake). An IP
  // literal is not resolved; a host name's addresses are reused for ResolveCache's TTL, and
  // looked up again at once when a connect fails on all of them (the backend may have moved).
  // `url` must stay valid until the connect completes (the request's snapshot holds it).
  Task<ConnectResult> connect(routing::BackendId id, const config::BackendUrl& url);
  // After a reload: a backend whose URL now names another server loses its pooled connections
  // and cached addresses (its id stays: it is the same backend by name). Cheap when unchanged.
  void sync_origin(routing::BackendId id, const config::BackendUrl& url);
  // Keeps `conn` for reuse; the caller has checked the exchange ended cleanly.
  void release(UpstreamPtr conn);
  void clear();
  std::size_t idle_count() const;
  // The read-buffer storage the idle connections hold (none: it waits in the pool's rooms).
  std::size_t idle_buffer_bytes() const;

  static constexpr std::size_t kMaxIdlePerBackend = 256;
  // An idle connection holds no read buffer (16 KiB each, up to kMaxIdlePerBackend per backend
  // after a burst): its room is kept here for the next connection that reads, at most this many.
  using IdleRooms = SpareRooms<64, 4 * UpstreamConnection::kBufferBytes>;

 private:
  bool still_alive(UpstreamConnection& c) const;
  // A lookup under way. Its waiters sleep on `done`, which expires at the lookup's deadline
  // (CONNECT_TIMEOUT) and is cancelled when the answer is in.
  struct PendingLookup {
    explicit PendingLookup(const Executor& ex) : done(ex) {}
    asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                               Executor>
        done;
    bool finished = false;
    Endpoints found;
    error_code error = asio::error::operation_aborted;  // until an answer is stored
  };

  // The backend's addresses (cached, or looked up now); empty with `error` set on failure,
  // asio::error::timed_out when no answer came within CONNECT_TIMEOUT. Connects that need a
  // lookup while one for the same backend is under way wait for its answer.
  Task<Endpoints> endpoints_of(routing::BackendId id, const config::BackendUrl& url, bool fresh,
                               error_code& error);
  // Looks the backend's name up, stores the answer in the cache and in `lookup`, wakes waiters.
  // Takes its own copy of the host: it may outlive the connect that started it.
  Task<> run_lookup(routing::BackendId id, std::string host, std::uint16_t port,
                    std::shared_ptr<PendingLookup> lookup);
  // Makes room for backend `id` in the per-backend vectors.
  void ensure(routing::BackendId id);
  Task<Endpoints> system_lookup(const std::string& host, std::uint16_t port, error_code& error);

  io::DeadlineSweeper& sweeper_;
  const config::Config& cfg_;
  ssl::context& tls_;
  const base::Clock& clock_;
  telemetry::RequestObserver* observer_;
  LookupFn lookup_;
  std::vector<std::vector<UpstreamPtr>> idle_;  // by backend id, most recent last
  IdleRooms rooms_;
  ResolveCache<Endpoints> resolved_;                     // by backend id
  std::vector<std::string> origins_;                     // by backend id: scheme, host, port seen last
  std::vector<std::shared_ptr<PendingLookup>> pending_;  // by backend id, while one is under way
  std::vector<std::shared_ptr<io::TlsResumption>> resumptions_;  // by backend id: its last TLS session
};

// The client TLS context for all upstreams: system CAs (+ UPSTREAM_CA_FILE), TLS >= 1.2,
// peer verification on. Built once, before worker threads start.
std::unique_ptr<ssl::context> make_upstream_tls_context(const config::Config& cfg);

}  // namespace smartlb::net
