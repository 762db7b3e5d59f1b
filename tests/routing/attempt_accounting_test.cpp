// Passive health for one attempt: what its answer means, and what a failed one changes.
#include "smartlb/routing/attempt_accounting.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "routing_fixture.hpp"

namespace smartlb {
namespace attempt_accounting_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const auto kWall = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));

TEST(JudgeAnswer, A429FailsOverWithItsRetryHint) {
  http::ThrottleHeaders h;
  h.retry_after = "5";
  h.remaining_tokens = "0";
  const routing::Judged j = routing::judge_answer(429, h, true, 60s, kWall);
  EXPECT_TRUE(j.verdict.fail_over);
  EXPECT_EQ(j.verdict.cause, routing::FailureCause::Throttled);
  EXPECT_EQ(j.hint, 5000ms);
  EXPECT_EQ(j.report.remaining_tokens, 0);
}

TEST(JudgeAnswer, A429ForADayIsAnExhaustedQuota) {
  http::ThrottleHeaders h;
  h.retry_after = "86400";
  EXPECT_EQ(routing::judge_answer(429, h, true, 60s, kWall).verdict.cause,
            routing::FailureCause::QuotaExhausted);
}

TEST(JudgeAnswer, ASuccessIsRelayedAndItsReportRead) {
  http::ThrottleHeaders h;
  h.remaining_requests = "7";
  h.retry_after = "3";  // a hint on a success means nothing
  const routing::Judged j = routing::judge_answer(200, h, true, 60s, kWall);
  EXPECT_FALSE(j.verdict.fail_over);
  EXPECT_EQ(j.hint, std::nullopt);
  EXPECT_EQ(j.report.remaining_requests, 7);
}

TEST(JudgeAnswer, A404FailsOverOnlyWhenTheRequestNamesWhatIsMissing) {
  EXPECT_TRUE(routing::judge_answer(404, {}, true, 60s, kWall).verdict.fail_over);
  EXPECT_FALSE(routing::judge_answer(404, {}, false, 60s, kWall).verdict.fail_over)
      << "any other 404 is everyone's";
  EXPECT_FALSE(routing::judge_answer(400, {}, true, 60s, kWall).verdict.fail_over);
}

struct CountingSharer : routing::FailureSharer {
  std::vector<Failure> told;
  void count(Failure f) override { told.push_back(std::move(f)); }
};

struct Accounting : RoutingFixture {
  routing::FailureBreakers breakers;
  routing::Accounted fail_once(const routing::BreakerRule& rule, const routing::Verdict& v) {
    return account_failure(*states, breakers, member(0), "gpt", rule, v, std::nullopt, 0, clock.now());
  }
};

TEST_F(Accounting, AFailureCoolsTheTargetDown) {
  make({{"a", 1, 1, ""}});
  const routing::Accounted a =
      account_failure(*states, breakers, member(0), "gpt", {}, throttled(), 3s, 0, clock.now());
  EXPECT_EQ(a.cooldown, 3s);
  EXPECT_FALSE(a.breaker_tripped);
  EXPECT_FALSE(available(0, "gpt"));
}

TEST_F(Accounting, OneFailureMoreThanAllowedTripsTheBreaker) {
  make({{"a", 1, 1, ""}});
  const routing::BreakerRule rule{2, 300s, "a/gpt"};
  EXPECT_FALSE(fail_once(rule, refused()).breaker_tripped);
  EXPECT_FALSE(fail_once(rule, refused()).breaker_tripped);
  EXPECT_TRUE(fail_once(rule, refused()).breaker_tripped);
  clock.advance(20s);  // the connect failures' cooldowns are over, the breaker's is not
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt").cause, routing::FailureCause::FailureTolerance);
}

TEST_F(Accounting, AMissingCredentialIsNoFailureTheBreakerCounts) {
  make({{"a", 1, 1, ""}});
  const routing::BreakerRule rule{0, 300s, "a/gpt"};
  EXPECT_FALSE(fail_once(rule, {true, routing::FailureCause::Credential, routing::CooldownScope::Backend})
                   .breaker_tripped)
      << "nothing was sent";
  EXPECT_TRUE(fail_once(rule, refused()).breaker_tripped);
}

TEST_F(Accounting, AFailureTheLocalCountDoesNotTripOnIsToldToTheReplicas) {
  make({{"a", 1, 1, ""}});
  CountingSharer sharer;
  breakers.set_sharer(&sharer);
  fail_once({5, 60s, "a/gpt"}, refused());
  ASSERT_EQ(sharer.told.size(), 1u);
  EXPECT_EQ(sharer.told[0].backend, "a");
  EXPECT_EQ(sharer.told[0].deployment, "gpt");
  EXPECT_EQ(sharer.told[0].target, "a/gpt");
  EXPECT_EQ(sharer.told[0].allowed, 5u);
  fail_once({}, refused());
  EXPECT_EQ(sharer.told.size(), 1u) << "no breaker: nothing to count";
}

}  // namespace attempt_accounting_test
}  // namespace smartlb
