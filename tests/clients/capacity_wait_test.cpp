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

constexpr CapacityWaitPolicy kGraceOnly{0s, 10, 100ms};

CapacityWaitAsk predicted(std::optional<base::Nanos> retry_after, base::Nanos waited = 0s) {
  CapacityWaitAsk a = ask(retry_after, waited);
  a.predicted = true;
  return a;
}

TEST(CapacityWait, WhateverTheClassAPredictionsRefusalWithinTheGraceIsWaitedOut) {
  EXPECT_EQ(capacity_wait(kGraceOnly, predicted(2ms)), base::Nanos(2ms));
  EXPECT_EQ(capacity_wait(kGraceOnly, predicted(100ms)), base::Nanos(100ms));
  EXPECT_EQ(capacity_wait(kGraceOnly, predicted(0ms)), base::Nanos(kCapacityMinWait));
}

TEST(CapacityWait, ARefusalABackendMadeGetsNoGrace) {
  EXPECT_EQ(capacity_wait(kGraceOnly, ask(2ms)), std::nullopt) << "its 429, or a failure's cooldown";
}

TEST(CapacityWait, ARefusalPastTheGraceIsAnsweredAtOnce) {
  EXPECT_EQ(capacity_wait(kGraceOnly, predicted(101ms)), std::nullopt);
}

TEST(CapacityWait, TheGraceIsGrantedOnceOnly) {
  EXPECT_EQ(capacity_wait(kGraceOnly, predicted(2ms, 1ms)), std::nullopt) << "refused again after its grace";
}

TEST(CapacityWait, ARefusalNoClockPredictsGetsNoGrace) {
  EXPECT_EQ(capacity_wait(kGraceOnly, predicted(std::nullopt)), std::nullopt) << "an in-flight cap: no poll";
}

TEST(CapacityWait, TheGraceNeitherShortensALongerWaitNorOutlastsTheRequest) {
  constexpr CapacityWaitPolicy kBoth{5s, 10, 100ms};
  EXPECT_EQ(capacity_wait(kBoth, predicted(1200ms)), base::Nanos(1200ms));
  EXPECT_EQ(capacity_wait(kBoth, predicted(1s, 4s)), base::Nanos(1s));
  CapacityWaitAsk a = predicted(50ms);
  a.request_left = 20ms;
  EXPECT_EQ(capacity_wait(kGraceOnly, a), std::nullopt) << "the request's time is up first";
}

}  // namespace capacity_wait_test
}  // namespace smartlb::clients
