#pragma once
// Runs a function on the Redis thread every `period` while Redis is up (the shared quotas' and
// in-flight leases' ticks). The period is kept by a thread of its own on the real clock (a
// manual clock in tests does not move by itself); what runs, runs on the Redis thread.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "smartlb/redis/redis_service.hpp"

namespace smartlb::redis {

class RedisTicker {
 public:
  RedisTicker(RedisService& redis, std::chrono::milliseconds period, std::function<void()> tick);
  ~RedisTicker();  // stops at once (joins the thread); a tick already posted may still run
  RedisTicker(const RedisTicker&) = delete;
  RedisTicker& operator=(const RedisTicker&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above is built
};

}  // namespace smartlb::redis
