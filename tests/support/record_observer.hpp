#pragma once
// Keeps the record of the last finished request, and lets a test await it.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::testing {

class LastRecord final : public RequestObserver {
 public:
  void on_request(const RequestRecord& rec) override {
    std::lock_guard lock(mutex_);
    last_ = rec;
    finished_ = true;
    cv_.notify_all();
  }
  // The record once a request has finished (nullopt after a safety deadline: a hang, not a
  // timing assertion).
  std::optional<RequestRecord> await() {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return finished_; })) return std::nullopt;
    return last_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  RequestRecord last_;
};

}  // namespace smartlb::testing
