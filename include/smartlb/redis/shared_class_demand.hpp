#pragma once
// Priority classes' demand shared by replicas (docs/scale-out.md). A lower class leaves room at a
// target for the demand of the classes above it (routing/class_reserve.hpp); with several
// replicas, the interactive requests that one replica sends are demand the batch requests
// another sends must leave room for. So every kPeriod each replica publishes, per target, the
// rate of each class it sent there lately, and adds the others' (summed) to its own while they
// are fresh (kTtl). Pub/sub only: nothing is stored, no request waits on Redis; with Redis lost,
// each replica leaves room for its own demand only, as with one replica.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/redis/demand_message.hpp"
#include "smartlb/redis/heard_demand.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/redis/redis_ticker.hpp"
#include "smartlb/routing/backend_states.hpp"

namespace smartlb::redis {

class SharedClassDemand {
 public:
  static constexpr std::chrono::milliseconds kPeriod{250};
  static constexpr std::chrono::milliseconds kTtl{1'000};          // a lost message is not a lost demand
  static constexpr double kMinRequestsPerSecond = 0.01;            // below it, a class sends nothing
  static constexpr std::size_t kMaxPublished = kMaxDemandTargets;  // targets per message

  // Subscribes (call before redis.start()) and publishes every kPeriod while Redis is up. Stop
  // `redis` before destroying it.
  SharedClassDemand(RedisService& redis, routing::BackendStates& states, const base::Clock& clock);
  SharedClassDemand(const SharedClassDemand&) = delete;
  SharedClassDemand& operator=(const SharedClassDemand&) = delete;

  // Runs on the Redis thread (public for tests that drive it without the ticker's wait).
  void publish();

 private:
  void apply(std::string_view payload);  // on the Redis thread

  RedisService& redis_;
  routing::BackendStates& states_;
  const base::Clock& clock_;
  const std::string channel_;
  // Only the Redis thread touches these.
  HeardDemand heard_{std::chrono::duration_cast<base::Nanos>(kTtl)};  // by "backend\ndeployment"
  std::size_t next_published_ = 0;  // where the next message starts when there are too many targets
  RedisTicker ticker_;              // last: it starts ticking once the rest is built
};

}  // namespace smartlb::redis
