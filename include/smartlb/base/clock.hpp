#pragma once
// Time as the routing core sees it: an injected source, so tests drive cooldowns with a
// manual clock instead of sleeping.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace smartlb::base {

using Nanos = std::chrono::nanoseconds;
using Millis = std::chrono::milliseconds;

// Monotonic nanoseconds since an arbitrary epoch. A plain integer so that deadlines fit
// in lock-free atomics.
using MonoNanos = std::int64_t;

// CLOCK_MONOTONIC_COARSE: the timeline of std::chrono::steady_clock as of the last scheduler
// tick, read without the TSC.
inline MonoNanos coarse_monotonic_now() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return MonoNanos(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoNanos now() const = 0;
  // The same timeline as now(), but allowed to lag it by a scheduler tick (1-10 ms with the
  // kernel's HZ; 4 ms on Debian's): for deadlines and idle times counted in seconds, where precision is not
  // worth the cost (in a VM, ~5 ns instead of ~23 ns per read, and a request reads the clock often).
  virtual MonoNanos coarse_now() const { return now(); }
  // Wall-clock time, needed only to turn an HTTP-date `Retry-After` into a delay.
  virtual std::chrono::system_clock::time_point wall_now() const = 0;
};

class SystemClock final : public Clock {
 public:
  MonoNanos now() const override {
    return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  MonoNanos coarse_now() const override { return coarse_monotonic_now(); }
  std::chrono::system_clock::time_point wall_now() const override { return std::chrono::system_clock::now(); }
};

// A clock that moves only when told to. Safe to read from several threads.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(MonoNanos start = 1'000'000'000'000) : now_(start) {}
  MonoNanos now() const override { return now_.load(std::memory_order_relaxed); }
  std::chrono::system_clock::time_point wall_now() const override { return wall_epoch_ + Nanos(now()); }
  void advance(Nanos d) { now_.fetch_add(d.count(), std::memory_order_relaxed); }
  void set_wall_epoch(std::chrono::system_clock::time_point e) { wall_epoch_ = e; }

 private:
  std::atomic<MonoNanos> now_;
  std::chrono::system_clock::time_point wall_epoch_{std::chrono::seconds(1'700'000'000)};
};

}  // namespace smartlb::base
