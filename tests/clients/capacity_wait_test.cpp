// A request's bounded wait for capacity: when it waits, for how long, and when it is answered at
// once instead. (The queue's length: forward_job_test's CapacityWait.AFullQueue*.)
#include "smartlb/clients/capacity_wait.hpp"

#include <gtest/gtest.h>

namespace smartlb::clients {
namespace capacity_wait_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

constexpr CapacityWaitPolicy kFiveSeconds{5s, 10};

CapacityWaitAsk ask(std::optional<base::Nanos> retry_after, base::Nanos waited = 0s) {
  CapacityWaitAsk a;
  a.waited = waited;
  a.retry_after = retry_after;
  a.request_left = 300s;
  return a;
}

TEST(CapacityWait, AClassWithoutAWaitIsAnsweredAtOnce) {
  EXPECT_EQ(capacity_wait({}, ask(100ms)), std::nullopt);
}

TEST(CapacityWait, ARefusalThatSaysWhenWaitsExactlyThatLong) {
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(1200ms)), base::Nanos(1200ms));
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(1s, 4s)), base::Nanos(1s))
      << "what is left of the wait covers it";
}

TEST(CapacityWait, ARefusalWhoseRoomComesBackAfterTheWaitIsAnsweredAtOnce) {
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(6s)), std::nullopt) << "waiting would only delay the same 429";
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(1500ms, 4s)), std::nullopt) << "1 s of the 5 is left";
}

TEST(CapacityWait, TheRequestTimeoutBoundsTheWaitToo) {
  CapacityWaitAsk a = ask(2s);
  a.request_left = 1s;
  EXPECT_EQ(capacity_wait(kFiveSeconds, a), std::nullopt);
  a.retry_after.reset();
  EXPECT_EQ(capacity_wait(kFiveSeconds, a), base::Nanos(kCapacityPollStep));
  a.request_left = 20ms;
  EXPECT_EQ(capacity_wait(kFiveSeconds, a), base::Nanos(20ms)) << "never past the request's end";
}

TEST(CapacityWait, ARefusalNoClockPredictsIsLookedAtAgainEveryStep) {
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(std::nullopt)), base::Nanos(kCapacityPollStep));
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(std::nullopt, 4990ms)), base::Nanos(10ms));
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(std::nullopt, 5s)), std::nullopt) << "the wait is over";
}

TEST(CapacityWait, ARefusalThatSaysNowStillWaitsALittle) {
  EXPECT_EQ(capacity_wait(kFiveSeconds, ask(0ms)), base::Nanos(kCapacityMinWait));
}

}  // namespace capacity_wait_test
}  // namespace smartlb::clients
