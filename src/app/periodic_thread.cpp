#include "smartlb/app/periodic_thread.hpp"

namespace smartlb::app {

PeriodicThread::PeriodicThread(std::chrono::milliseconds interval, std::function<void()> tick)
    : interval_(interval), tick_(std::move(tick)), thread_([this] { run(); }) {}

PeriodicThread::~PeriodicThread() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PeriodicThread::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    tick_();
    lock.lock();
  }
}

}  // namespace smartlb::app
