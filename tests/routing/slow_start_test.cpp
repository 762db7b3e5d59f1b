// Slow start: the weight of a member back from a cooldown ramps from 10 % to full.
#include "smartlb/routing/slow_start.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace slow_start_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

constexpr base::MonoNanos kBack = 1'000'000'000'000;  // when the cooldown ended
constexpr base::MonoNanos at(base::Nanos after) { return kBack + after.count(); }

TEST(SlowStart, RampsLinearlyFromATenthToFull) {
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(0s), 60s), 10u);
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(30s), 60s), 55u);
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(59s), 60s), 98u);  // 10 + 90 * 59/60 = 98.5
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(60s), 60s), 100u);
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(1h), 60s), 100u);
}

TEST(SlowStart, NeverBelowOne) {
  EXPECT_EQ(routing::slow_start_weight(1, kBack, at(0s), 60s), 1u);
  EXPECT_EQ(routing::slow_start_weight(5, kBack, at(0s), 60s), 1u);
  EXPECT_EQ(routing::slow_start_weight(5, kBack, at(30s), 60s), 3u);  // 1 + 4 * 0.5
}

TEST(SlowStart, NeverDecreasesAndStaysInRange) {
  for (std::uint32_t weight : {1u, 2u, 7u, 10u, 999u, 4'000'000'000u}) {
    std::uint32_t previous = 0;
    for (base::Nanos t = -1s; t <= 61s; t += 500ms) {
      const std::uint32_t w = routing::slow_start_weight(weight, kBack, at(t), 60s);
      EXPECT_GE(w, previous) << weight << " at " << t.count();
      EXPECT_GE(w, 1u);
      EXPECT_LE(w, weight);
      previous = w;
    }
    EXPECT_EQ(previous, weight);
  }
}

TEST(SlowStart, FullWeightWithoutPeriodOrCooldown) {
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(0s), 0s), 100u) << "slow start off";
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(0s), -5s), 100u);
  EXPECT_EQ(routing::slow_start_weight(100, 0, kBack, 60s), 100u) << "never cooled down";
}

TEST(SlowStart, NowBeforeRecoveryIsTheStartOfTheRamp) {
  EXPECT_EQ(routing::slow_start_weight(100, kBack, at(-4ms), 60s), 10u);
}

TEST(SlowStart, ZeroWeightStaysZero) { EXPECT_EQ(routing::slow_start_weight(0, kBack, at(1s), 60s), 0u); }

}  // namespace slow_start_test
}  // namespace smartlb
