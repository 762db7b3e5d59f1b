#pragma once
// Requests sent back to back from a few threads until stopped, counting the answers that were
// not 200: the load under which reload tests check that nothing is lost.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http_client.hpp"

namespace smartlb::testing {

class ContinuousTraffic {
 public:
  ContinuousTraffic(std::uint16_t port, std::string target, int threads = 2) : target_(std::move(target)) {
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this, port] {
        while (!stop_.load()) {
          const auto r = http_call(port, "POST", target_, {}, "{}");
          std::lock_guard lock(mutex_);
          ++sent_;
          if (r.status != 200) ++failed_;
          cv_.notify_all();
        }
      });
  }
  ~ContinuousTraffic() { stop(); }

  // Waits (bounded, so a stalled proxy fails the test instead of hanging it) until `n` answers came.
  bool await_sent(int n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return sent_ >= n; });
  }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  int sent() {
    std::lock_guard lock(mutex_);
    return sent_;
  }
  int failed() {
    std::lock_guard lock(mutex_);
    return failed_;
  }

 private:
  std::string target_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  int sent_ = 0, failed_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace smartlb::testing
