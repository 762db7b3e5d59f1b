#pragma once
// Cooldowns shared by replicas (docs/scale-out.md). A cooldown applied here is published: an
// atomic max on its key in Redis (deadlines only grow there too; the key expires with the
// deadline) and, when that grew it, a message on the cooldown channel, which every replica
// applies at once. A cooldown learnt from Redis is applied without being told back (no echo).
// When Redis (re)connects, the cooldowns still in the future are read and applied, and those
// this replica saw while Redis was away are published.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "smartlb/redis/cooldown_message.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/routing/backend_states.hpp"

namespace smartlb::redis {

class SharedCooldowns final : public routing::CooldownListener {
 public:
  // Subscribes and registers with `redis` (call before redis.start()) and listens to `states`.
  SharedCooldowns(RedisService& redis, routing::BackendStates& states);
  ~SharedCooldowns() override;  // stops listening; stop `redis` first
  SharedCooldowns(const SharedCooldowns&) = delete;
  SharedCooldowns& operator=(const SharedCooldowns&) = delete;

  void on_cooldown(const routing::CooldownNotice& notice) override;

  // Cooldowns learnt from other replicas that moved a deadline here.
  std::uint64_t applied() const { return applied_.load(std::memory_order_relaxed); }
  // Cooldowns published (the key's deadline grew).
  std::uint64_t published() const { return published_.load(std::memory_order_relaxed); }

  // The script: KEYS[1] the cooldown key; ARGV: until_ms, the message's JSON, the channel.
  // Returns the key's value after it (the later deadline, whoever set it).
  static const RedisScript& script();

 private:
  void publish(CooldownMessage m);  // on the Redis thread
  void apply(std::string_view text, bool from_resync);
  void resync();
  void scan(std::string cursor);

  RedisService& redis_;
  routing::BackendStates& states_;
  std::string prefix_, channel_;
  // Seen while Redis was away, published when it returns: by key, the latest deadline. Redis
  // thread only; bounded.
  std::map<std::string, CooldownMessage> unpublished_;
  static constexpr std::size_t kMaxUnpublished = 4096;
  std::atomic<std::uint64_t> applied_{0}, published_{0};
};

}  // namespace smartlb::redis
