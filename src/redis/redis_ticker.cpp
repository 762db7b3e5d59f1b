#include "smartlb/redis/redis_ticker.hpp"

namespace smartlb::redis {

RedisTicker::RedisTicker(RedisService& redis, std::chrono::milliseconds period, std::function<void()> tick)
    : thread_([this, &redis, period, tick = std::move(tick)] {
        std::unique_lock lock(mutex_);
        while (!cv_.wait_for(lock, period, [this] { return stopping_; }))
          if (redis.up()) redis.post(tick);
      }) {}

RedisTicker::~RedisTicker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace smartlb::redis
