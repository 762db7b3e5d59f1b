#pragma once
// One immutable value that a writer replaces whole while readers keep using the one they hold
// (the running configuration: a reload publishes a new one, and requests in flight finish on
// the one they started with). Readers on a hot path check version() -- one relaxed load --
// and take current() only when it moved.
#include <atomic>
#include <cstdint>
#include <memory>

namespace smartlb {

template <class T>
class Published {
 public:
  explicit Published(std::shared_ptr<const T> initial) : value_(std::move(initial)) {}

  std::shared_ptr<const T> current() const { return value_.load(std::memory_order_acquire); }
  // Counts publications: a reader that saw version v and sees v again holds the latest value.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

  void publish(std::shared_ptr<const T> next) {
    value_.store(std::move(next), std::memory_order_release);
    version_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::atomic<std::shared_ptr<const T>> value_;
  std::atomic<std::uint64_t> version_{1};
};

}  // namespace smartlb
