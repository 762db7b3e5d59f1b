#pragma once
// Keeps the record of the last finished request, and lets a test await it.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::testing {

class LastRecord final : public telemetry::RequestObserver {
 public:
  void on_request(const telemetry::RequestRecord& rec) override {
    std::lock_guard lock(mutex_);
    last_ = rec;
    ++finished_;
    cv_.notify_all();
  }
  std::size_t finished() const {
    std::lock_guard lock(mutex_);
    return finished_;
  }
  // The last record once `n` requests have finished (nullopt after a safety deadline: a hang,
  // not a timing assertion).
  std::optional<telemetry::RequestRecord> await(std::size_t n = 1) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return finished_ >= n; })) return std::nullopt;
    return last_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t finished_ = 0;
  telemetry::RequestRecord last_;
};

}  // namespace smartlb::testing
