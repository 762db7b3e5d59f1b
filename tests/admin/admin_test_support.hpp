#pragma once
// For the admin integration tests: an observer that lets a test await finished requests.
// (The scripted backend and the HTTP client are the shared ones in tests/support.)
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::test {

// Forwards to Metrics and lets a test wait until a number of requests have finished.
class AwaitableObserver final : public telemetry::RequestObserver {
 public:
  explicit AwaitableObserver(telemetry::Metrics& m) : metrics_(m) {}
  void on_request_start() override { metrics_.on_request_start(); }
  void on_request(const telemetry::RequestRecord& rec) override {
    metrics_.on_request(rec);
    std::lock_guard lock(mutex_);
    ++finished_;
    cv_.notify_all();
  }
  // True once `n` requests have finished; false after a generous safety deadline (a hang,
  // not a timing assertion).
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return finished_ >= n; });
  }

 private:
  telemetry::Metrics& metrics_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t finished_ = 0;
};

}  // namespace smartlb::test
