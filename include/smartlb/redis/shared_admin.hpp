#pragma once
// The operators' admin settings shared by replicas (docs/operations.md): a change made through
// one replica's admin API is stored in the admin hash (the backend's scopes replaced whole, in
// one script) and published on the admin channel, which every other replica applies at once. A
// lift also deletes the scope's cooldown keys, so that a replica reading them back later does
// not bring a lifted 429 back. When Redis (re)connects (and so when a replica starts), the
// changes made here while it was away are written first, then the hash is read whole and
// replaces what this replica holds: a restarted replica comes up with the drains of the others.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>

#include "smartlb/redis/redis_service.hpp"
#include "smartlb/routing/backend_states.hpp"

namespace smartlb::redis {

class SharedAdmin final : public routing::AdminListener {
 public:
  // Subscribes and registers with `redis` (call before redis.start()) and listens to `states`.
  SharedAdmin(RedisService& redis, routing::BackendStates& states);
  ~SharedAdmin() override;  // stops listening; stop `redis` first
  SharedAdmin(const SharedAdmin&) = delete;
  SharedAdmin& operator=(const SharedAdmin&) = delete;

  void on_admin_change(const routing::AdminChange& change) override;

  // Changes learnt from other replicas' messages, and resynchronisations applied.
  std::uint64_t applied() const { return applied_.load(std::memory_order_relaxed); }
  std::uint64_t resyncs() const { return resyncs_.load(std::memory_order_relaxed); }

  // KEYS[1] the admin hash; ARGV: the backend, the channel, the message ("" for none), then
  // field, value pairs: the backend's fields replaced by these, then the message published.
  static const RedisScript& script();

 private:
  // `then` (may be empty) runs on the Redis thread once the script answered (or failed).
  void store(const std::string& backend, const std::string& message, std::function<void()> then = {});
  void lift_cooldowns(const routing::AdminChange& change);
  void delete_cooldowns(std::string cursor, std::string pattern);
  void apply(std::string_view payload);
  void resync();
  void read_all();

  RedisService& redis_;
  routing::BackendStates& states_;
  std::string prefix_, key_, channel_;
  // Changes made while Redis was away, in order (backend, message): stored and published when it
  // is back. Redis thread only; bounded (the oldest dropped: the hash still gets the settings
  // of the backends of the changes kept).
  std::deque<std::pair<std::string, std::string>> unstored_;
  static constexpr std::size_t kMaxUnstored = 1024;
  // Scripts sent and not answered yet: a read of the hash that answers meanwhile may miss one of
  // this replica's changes, so it is read again rather than taken.
  std::atomic<int> stores_in_flight_{0};
  // Other replicas' messages received. The hash read and the messages come over two
  // connections: a message applied while a read was on its way may be newer than what the read
  // returns, so such a read is taken again rather than let it undo the message.
  std::atomic<std::uint64_t> heard_{0};
  std::atomic<std::uint64_t> applied_{0}, resyncs_{0};
};

}  // namespace smartlb::redis
