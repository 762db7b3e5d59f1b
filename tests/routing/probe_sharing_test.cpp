// When a replica that lost the turn to probe a backend asks again (routing/probe_sharing).
#include "smartlb/routing/probe_sharing.hpp"

#include <gtest/gtest.h>

namespace smartlb::routing {
namespace probe_sharing_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using base::Nanos;

constexpr Nanos kInterval = 10s, kTimeout = 3s;

TEST(NextTurnCheck, AResultOfTheRunningTurnHoldsUntilTheNextTurn) {
  // The turn began 4 s ago (6 s left); its probe ended 3 s ago.
  EXPECT_EQ(next_turn_check(kInterval, kTimeout, 6s, Nanos(3s)), Nanos(6s));
}

TEST(NextTurnCheck, AResultOfAnEarlierTurnMeansTheProbeIsStillRunning) {
  // The turn began 100 ms ago; the result read is 9 s old (the turn before): ask again once the
  // probe must have ended (its timeout and the publishing margin after the turn began).
  EXPECT_EQ(next_turn_check(kInterval, kTimeout, 9900ms, Nanos(9s)), Nanos(3400ms));
  EXPECT_EQ(next_turn_check(kInterval, kTimeout, 9900ms, std::nullopt), Nanos(3400ms)) << "no result yet";
}

TEST(NextTurnCheck, AProberThatNeverPublishedLeavesItToTheNextTurn) {
  // 5 s into the turn and still nothing of this turn: it will not come; the next turn decides.
  EXPECT_EQ(next_turn_check(kInterval, kTimeout, 5s, Nanos(12s)), Nanos(5s));
}

TEST(NextTurnCheck, NeverLaterThanTheTurnsEnd) {
  EXPECT_EQ(next_turn_check(2s, kTimeout, 1900ms, std::nullopt), Nanos(1900ms));
  EXPECT_EQ(next_turn_check(kInterval, kTimeout, 0s, std::nullopt), Nanos(0)) << "the turn is over: take one";
  EXPECT_EQ(next_turn_check(kInterval, kTimeout, 20s, std::nullopt), Nanos(3500ms))
      << "a turn reported longer than the interval counts as just begun";
}

}  // namespace probe_sharing_test
}  // namespace smartlb::routing
