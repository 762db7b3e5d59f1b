#include "smartlb/routing/failure_breakers.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace failure_breakers_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr base::MonoNanos kSecond = 1'000'000'000;

TEST(FailureBreakers, TripsOnTheFirstFailureBeyondTheAllowance) {
  routing::FailureBreakers b;
  const routing::BackendId id{3};
  EXPECT_FALSE(b.record(id, "gpt-4o", 3, 1 * kSecond));
  EXPECT_FALSE(b.record(id, "gpt-4o", 3, 2 * kSecond));
  EXPECT_FALSE(b.record(id, "gpt-4o", 3, 3 * kSecond));
  EXPECT_TRUE(b.record(id, "gpt-4o", 3, 4 * kSecond)) << "the fourth in a minute";
  EXPECT_FALSE(b.record(id, "gpt-4o", 3, 5 * kSecond)) << "counting starts anew after a trip";
}

TEST(FailureBreakers, FailuresOlderThanAMinuteNoLongerCount) {
  routing::FailureBreakers b;
  const routing::BackendId id{0};
  EXPECT_FALSE(b.record(id, "m", 2, 0));
  EXPECT_FALSE(b.record(id, "m", 2, 1 * kSecond));
  EXPECT_FALSE(b.record(id, "m", 2, 70 * kSecond)) << "the first two left the window";
  EXPECT_FALSE(b.record(id, "m", 2, 71 * kSecond));
  EXPECT_TRUE(b.record(id, "m", 2, 72 * kSecond));
}

TEST(FailureBreakers, TargetsCountSeparately) {
  routing::FailureBreakers b;
  EXPECT_FALSE(b.record(routing::BackendId{0}, "a", 1, 0));
  EXPECT_FALSE(b.record(routing::BackendId{0}, "b", 1, 0));
  EXPECT_FALSE(b.record(routing::BackendId{1}, "a", 1, 0));
  EXPECT_TRUE(b.record(routing::BackendId{0}, "a", 1, 0));
}

TEST(FailureBreakers, NoFailureAllowedTripsAtOnce) {
  routing::FailureBreakers b;
  EXPECT_TRUE(b.record(routing::BackendId{0}, "a", 0, 0));
}

}  // namespace failure_breakers_test
}  // namespace smartlb
