// The coarse reading is the same timeline as now(), only behind it: callers subtract one from
// the other (a request's elapsed time is coarse_now() - start, with start from now()).
#include <gtest/gtest.h>

#include <chrono>

#include "smartlb/base/clock.hpp"

namespace smartlb {
namespace clock_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(SystemClock, CoarseNowIsNowsTimelineNeverAhead) {
  const base::SystemClock clock;
  for (int i = 0; i < 1000; ++i) {
    const base::MonoNanos coarse = clock.coarse_now();
    const base::MonoNanos fine = clock.now();
    ASSERT_LE(coarse, fine);  // read first, and it lags: never ahead
    // The same epoch: another clock (boot time, wall time) would be off by far more than the
    // tick or two that a coarse reading can lag (this is no timing bound on the machine).
    ASSERT_LT(fine - coarse, std::chrono::duration_cast<base::Nanos>(std::chrono::seconds(1)).count());
  }
}

TEST(SystemClock, CoarseNowNeverGoesBack) {
  const base::SystemClock clock;
  base::MonoNanos last = clock.coarse_now();
  for (int i = 0; i < 1000; ++i) {
    const base::MonoNanos t = clock.coarse_now();
    ASSERT_GE(t, last);
    last = t;
  }
}

TEST(ManualClock, CoarseNowIsNow) {
  base::ManualClock clock;
  clock.advance(std::chrono::milliseconds(3));
  EXPECT_EQ(clock.coarse_now(), clock.now());
}

}  // namespace clock_test
}  // namespace smartlb
