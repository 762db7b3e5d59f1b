#pragma once
// Redis for the rest of the program (docs/scale-out.md): one thread with its own io_context
// holds a command connection and a subscriber connection, reconnects with backoff, and keeps
// this replica registered with a heartbeat. Every call here is thread-safe and returns at once:
// a command is queued for the Redis thread and its callback runs there. Nothing on a worker
// thread ever waits on Redis. No Asio in this header.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/redis/redis_value.hpp"

namespace smartlb::redis {

// A Lua script, run with EVALSHA (and EVAL when the server does not know it yet: NOSCRIPT).
struct RedisScript {
  explicit RedisScript(std::string source);
  std::string source;
  std::string sha1;  // hex
};

struct ReplicaInfo {
  std::string id;
  std::string host;
  std::int64_t started_ms = 0;  // Unix milliseconds
  std::int64_t expires_ms = 0;  // its heartbeat's expiry
};

struct RedisStatus {
  std::string url;  // without the password
  std::string replica_id;
  bool up = false;
  std::string last_error;             // "" when none yet
  std::int64_t last_error_ms = 0;     // Unix milliseconds
  std::int64_t up_since_ms = 0;       // Unix milliseconds of the latest connection (0: down)
  std::vector<ReplicaInfo> replicas;  // live ones as last read, this one included
};

struct RedisServiceOptions {
  config::RedisConfig config;
  std::string fallback_ca_file;  // trusted for rediss:// too when REDIS_CA_FILE is not set
  std::chrono::milliseconds heartbeat{1000};
  std::chrono::milliseconds replica_ttl{5000};  // a replica without a heartbeat this long is gone
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds backoff_initial{100}, backoff_cap{5000};
  // Told on the Redis thread (metrics): up or down, a failed command or connection attempt,
  // a command's round trip, the live replica count.
  std::function<void(bool up)> on_state;
  std::function<void()> on_error;
  std::function<void(double seconds)> on_command;
  std::function<void(std::size_t live)> on_replicas;
};

class RedisService {
 public:
  RedisService(const base::Clock& clock, RedisServiceOptions options);
  ~RedisService();  // stops
  RedisService(const RedisService&) = delete;
  RedisService& operator=(const RedisService&) = delete;

  // Before start(): a channel whose messages go to `on_message` (on the Redis thread),
  // subscribed again after every reconnection.
  void subscribe(std::string channel, std::function<void(std::string_view payload)> on_message);
  // Before start(): runs on the Redis thread every time Redis comes (back) up, after the
  // subscriptions are in place (resynchronisation).
  void on_connected(std::function<void()> fn);
  // Before start(): runs on the Redis thread every time Redis is lost (not at stop()): from
  // then on, local state only (a leased budget falls back to its local share).
  void on_disconnected(std::function<void()> fn);

  // Starts the thread and waits for the first connection attempt (at most the connect
  // timeout). Redis unreachable is not an error (the service keeps trying); Redis refusing the
  // credentials is: std::runtime_error naming REDIS_URL, without the password.
  void start();
  void stop();  // deregisters this replica (best effort, bounded), then the thread ends

  // Queued for the Redis thread; `done` (may be empty) runs there with the reply, or with a
  // failure when Redis is not up or is lost before answering.
  void command(std::vector<std::string> args, RedisCallback done = {});
  // EVALSHA, falling back to EVAL on NOSCRIPT. `script` must outlive the call's completion.
  void eval(const RedisScript& script, std::vector<std::string> keys, std::vector<std::string> args,
            RedisCallback done = {});
  // Runs `fn` on the Redis thread (where every callback runs), e.g. to touch state that only
  // that thread owns. Dropped after stop().
  void post(std::function<void()> fn);

  bool up() const { return up_.load(std::memory_order_relaxed); }
  // Live replicas as last read (this one included; at least 1). The quota share when Redis
  // is lost is the quota divided by this.
  std::size_t live_replicas() const { return live_.load(std::memory_order_relaxed); }
  RedisStatus status() const;
  const std::string& key_prefix() const;
  const std::string& replica_id() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> up_{false};
  std::atomic<std::size_t> live_{1};
};

}  // namespace smartlb::redis
