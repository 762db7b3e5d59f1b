#pragma once
// Time source for the simulator core. The core never reads a clock directly: it is handed a
// Clock, so unit tests drive time by hand (ManualClock) instead of sleeping.

#include <chrono>
#include <cstdint>

namespace smartlb::sim {

using SteadyTime = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  /// Monotonic time, used for quota windows.
  virtual SteadyTime now() const = 0;
  /// Wall-clock seconds since the Unix epoch, used for the `created` field of responses.
  virtual std::int64_t unix_seconds() const = 0;
};

class SystemClock final : public Clock {
 public:
  SteadyTime now() const override { return std::chrono::steady_clock::now(); }
  std::int64_t unix_seconds() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock that only moves when told to. Not thread-safe: for single-threaded tests.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t unix_start = 1'700'000'000) : unix_start_(unix_start) {}
  SteadyTime now() const override { return start_ + elapsed_; }
  std::int64_t unix_seconds() const override {
    return unix_start_ + std::chrono::duration_cast<std::chrono::seconds>(elapsed_).count();
  }
  void advance(std::chrono::nanoseconds by) { elapsed_ += by; }

 private:
  SteadyTime start_{std::chrono::hours(1)};
  std::chrono::nanoseconds elapsed_{0};
  std::int64_t unix_start_;
};

}  // namespace smartlb::sim
