#include "smartlb/app/periodic_thread.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace smartlb {
namespace periodic_thread_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(PeriodicThread, CallsItsFunctionAgainAndAgainOnItsOwnThread) {
  std::mutex mutex;
  std::condition_variable cv;
  int ticks = 0;
  std::thread::id where;
  {
    app::PeriodicThread thread(1ms, [&] {
      std::lock_guard lock(mutex);
      ++ticks;
      where = std::this_thread::get_id();
      cv.notify_all();
    });
    std::unique_lock lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, 20s, [&] { return ticks >= 3; }));
  }
  EXPECT_NE(where, std::this_thread::get_id());
}

TEST(PeriodicThread, StopsWithoutWaitingOutItsInterval) {
  // An hour's interval: if destruction waited for it, the test would time out.
  int ticks = 0;
  {
    app::PeriodicThread thread(std::chrono::hours(1), [&] { ++ticks; });
  }
  EXPECT_EQ(ticks, 0);
}

}  // namespace periodic_thread_test
}  // namespace smartlb
