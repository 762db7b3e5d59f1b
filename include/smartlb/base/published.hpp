#pragma once
// One immutable value that a writer replaces whole while readers keep using the one they hold
// (the running configuration: a reload publishes a new one, and requests in flight finish on
// the one they started with). Readers on a hot path check version() -- one atomic load -- and
// take current() only when it moved, so the mutex is taken once per publication per reader.
// (Not std::atomic<std::shared_ptr>: libstdc++ 12 unlocks it with relaxed ordering after a
// load, which ThreadSanitizer reports as a race with the next store.)
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

namespace smartlb::base {

template <class T>
class Published {
 public:
  explicit Published(std::shared_ptr<const T> initial) : value_(std::move(initial)) {}

  std::shared_ptr<const T> current() const {
    std::lock_guard lock(mutex_);
    return value_;
  }
  // Counts publications: a reader that saw version v and sees v again holds the latest value.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

  void publish(std::shared_ptr<const T> next) {
    std::shared_ptr<const T> old;  // released outside the lock
    {
      std::lock_guard lock(mutex_);
      old = std::exchange(value_, std::move(next));
    }
    version_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const T> value_;
  std::atomic<std::uint64_t> version_{1};
};

}  // namespace smartlb::base
