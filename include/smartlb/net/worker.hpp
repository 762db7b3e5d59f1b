#pragma once
// A worker thread's world: its io_context, acceptor, upstream pool, snapshot cache, random
// source and loggers. Everything here is touched only from that thread; `Shared` is what all
// workers share.
#include <list>
#include <memory>
#include <optional>
#include <vector>

#include <spdlog/logger.h>

#include "smartlb/base/random.hpp"
#include "smartlb/clients/jwt/verified_token_cache.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/event_stream_buffer.hpp"
#include "smartlb/net/exchange_context.hpp"
#include "smartlb/net/relay_scratch.hpp"
#include "smartlb/net/shared.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {

// One client connection's registration, so a drain can wake it while it idles.
struct SessionEntry {
  io::TimedSocket* stream = nullptr;
  bool idle = false;
};

// Told on its worker's thread when a drain begins: a relayed WebSocket session, which then
// closes itself (close 1001 both ways) rather than wait for its peers.
class DrainListener {
 public:
  virtual void on_drain() = 0;

 protected:
  ~DrainListener() = default;
};

// An io_context whose services (and so the coroutine frames of pending operations) can be
// shut down before the Worker members those frames refer to are destroyed.
class WorkerContext : public io::asio::io_context {
 public:
  // One thread runs it, and only that thread starts or completes I/O on its sockets: the
  // reactor's per-socket locks can go (the scheduler keeps its lock for posts from other
  // threads, such as the drain and the resolver's completions).
  WorkerContext() : io::asio::io_context(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO) {}
  using io::asio::io_context::shutdown;
};

struct Worker {
  Worker(Shared& s, std::size_t idx, std::uint64_t seed);
  ~Worker();

  Shared& shared;
  std::size_t index;
  std::uint64_t origins_generation = 0;  // the snapshot whose backend URLs the pool was synced to
  WorkerContext ioc;
  io::DeadlineSweeper sweeper{ioc};
  std::optional<io::Acceptor> acceptor;
  UpstreamPool upstreams;
  SnapshotCache snapshots;
  clients::jwt::VerifiedTokenCache verified_tokens;  // clients' Entra ID tokens this worker has checked
  base::FastRandom rng;
  std::shared_ptr<spdlog::logger> access_log;  // null when ACCESS_LOG=off
  std::list<SessionEntry*> sessions;
  std::list<DrainListener*> drain_listeners;
  std::vector<std::unique_ptr<RelayScratch>> spare_scratch;   // lent out by RelayScratchLease
  std::vector<std::unique_ptr<RelayRound>> spare_rounds;      // lent out by RelayRoundLease
  std::vector<std::unique_ptr<std::byte[]>> spare_job_rooms;  // lent out by ForwardJobSlot
  EventRooms spare_event_rooms;                               // lent to streams as they read
  bool draining = false;
  // What the mechanism of forwarding may use of all this.
  ExchangeContext exchange_context{upstreams,     shared.cfg,      shared.clock,
                                   spare_scratch, spare_rounds,    spare_event_rooms,
                                   draining,      drain_listeners, rng};

  // Called on this worker's thread when a drain begins.
  void begin_drain();
};

}  // namespace smartlb::net
