#pragma once
// A thread that calls a function every `interval` until it is destroyed. Destruction wakes the
// thread at once (it does not wait out the interval) and joins it.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace smartlb::app {

class PeriodicThread {
 public:
  // The first call comes one interval after construction, on the new thread.
  PeriodicThread(std::chrono::milliseconds interval, std::function<void()> tick);
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  void run();

  std::chrono::milliseconds interval_;
  std::function<void()> tick_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above is built
};

}  // namespace smartlb::app
