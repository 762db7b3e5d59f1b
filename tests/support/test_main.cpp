// The main() of every GoogleTest executable here: GoogleTest's own, plus a watchdog that names
// a test that hangs. ctest runs each executable as a few shards with --gtest_brief and kills a
// shard at its TIMEOUT without a word of which test hung; a CI run then loses the whole timeout
// and learns nothing. The watchdog prints the test's name (and, where gdb is installed, every
// thread's stack, and its child processes') and aborts that shard as soon as one test has run
// for SMARTLB_TEST_HANG_SECONDS (default 120 s; the slowest test here takes a few seconds under a
// sanitizer). It asserts nothing about speed: it only turns a hang into a failure that says where
// it is.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "child_process.hpp"
#include "process_stacks.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::seconds hang_limit() {
  const char* text = std::getenv("SMARTLB_TEST_HANG_SECONDS");
  const long seconds = text != nullptr ? std::strtol(text, nullptr, 10) : 120;
  return std::chrono::seconds(seconds > 0 ? seconds : 120);
}

class HangWatchdog : public testing::EmptyTestEventListener {
 public:
  explicit HangWatchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { watch(); }) {}
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;
  ~HangWatchdog() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void OnTestStart(const testing::TestInfo& test) override {
    {
      std::lock_guard lock(mutex_);
      name_ = std::string(test.test_suite_name()) + "." + test.name();
      started_ = Clock::now();
      running_ = true;
      ++test_number_;
    }
    changed_.notify_all();
  }

  void OnTestEnd(const testing::TestInfo&) override {
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    changed_.notify_all();
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (!running_) {
        changed_.wait(lock);
        continue;
      }
      const unsigned long long test = test_number_;
      const bool moved_on = changed_.wait_until(
          lock, started_ + limit_, [&] { return stopping_ || !running_ || test_number_ != test; });
      if (moved_on) continue;
      std::fprintf(stderr, "\n[  HUNG    ] %s has run for %lld s (SMARTLB_TEST_HANG_SECONDS): aborting\n",
                   name_.c_str(), static_cast<long long>(limit_.count()));
      std::fflush(stderr);
      smartlb::testing::print_stacks_of(getpid());
      // Its child processes (a smartlb, a redis-server) would outlive it: end them first.
      for (const pid_t child : smartlb::testing::live_children()) {
        smartlb::testing::print_stacks_of(child);
        ::kill(child, SIGKILL);
      }
      std::abort();
    }
  }

  const std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string name_;
  Clock::time_point started_{};
  bool running_ = false;
  bool stopping_ = false;
  unsigned long long test_number_ = 0;
  std::thread thread_;  // last: starts once the rest is constructed
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  auto* watchdog = new HangWatchdog(hang_limit());
  listeners.Append(watchdog);
  const int result = RUN_ALL_TESTS();
  delete listeners.Release(watchdog);
  return result;
}
