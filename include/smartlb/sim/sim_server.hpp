#pragma once
// Thin HTTP/1.1 server (Boost.Beast, coroutines) that feeds requests to a SimEngine and
// carries out the returned plan: keep-alive, SSE as one chunked write per event, latency,
// stalls and TCP resets; realtime handshakes the engine admits become WebSocket sessions.

#include "smartlb/sim/sim_engine.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace smartlb::sim {

struct ServerOptions {
  std::string listen = "127.0.0.1";
  std::uint16_t port = 0;  // 0 = ephemeral
  int threads = 1;
  bool stop_on_signals = false;                   // SIGINT / SIGTERM stop run()
  std::size_t max_body_bytes = 32 * 1024 * 1024;  // larger request bodies: 413
};

class SimServer {
 public:
  /// Binds and listens immediately (throws std::exception when it cannot).
  SimServer(SimEngine& engine, ServerOptions options);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  std::uint16_t port() const;
  std::string address() const;

  /// Serves on `threads` threads until stop() (or a signal); returns afterwards.
  void run();
  /// Thread-safe; run() returns soon after.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smartlb::sim
