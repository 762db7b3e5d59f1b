#include "smartlb/routing/outcome.hpp"

#include <chrono>

#include <gtest/gtest.h>

namespace smartlb {
namespace outcome_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(Outcome, ThrottlingAndServerErrorsFailOverPerDeployment) {
  for (unsigned s : {429u, 500u, 502u, 503u, 504u, 529u}) {  // 529: Anthropic's overloaded_error
    const auto v = routing::judge_status(s, true);
    EXPECT_TRUE(v.fail_over) << s;
    EXPECT_EQ(v.scope, routing::CooldownScope::Deployment) << s;
  }
  EXPECT_EQ(routing::judge_status(429, true).cause, routing::FailureCause::Throttled);
}

TEST(Outcome, CredentialErrorsFailOverForTheWholeBackend) {
  for (unsigned s : {401u, 403u}) {
    const auto v = routing::judge_status(s, true);
    EXPECT_TRUE(v.fail_over);
    EXPECT_EQ(v.cause, routing::FailureCause::AuthRejected);
    EXPECT_EQ(v.scope, routing::CooldownScope::Backend);
  }
}

TEST(Outcome, NotFoundFailsOverOnlyOnDeploymentPaths) {
  EXPECT_TRUE(routing::judge_status(404, true).fail_over);
  EXPECT_FALSE(routing::judge_status(404, false).fail_over);
}

TEST(Outcome, ClientErrorsAndSuccessPassThrough) {
  for (unsigned s : {200u, 201u, 204u, 301u, 400u, 408u, 409u, 413u, 422u, 501u})
    EXPECT_FALSE(routing::judge_status(s, true).fail_over) << s;
}

TEST(Outcome, TransportFailuresFailOverForTheWholeBackend) {
  for (auto f : {routing::TransportFailure::Connect, routing::TransportFailure::Tls,
                 routing::TransportFailure::Timeout, routing::TransportFailure::Lost,
                 routing::TransportFailure::Protocol}) {
    const auto v = judge_transport(f);
    EXPECT_TRUE(v.fail_over);
    EXPECT_EQ(v.scope, routing::CooldownScope::Backend);
  }
  EXPECT_EQ(judge_transport(routing::TransportFailure::Timeout).cause, routing::FailureCause::Timeout);
}

TEST(Outcome, A429WithAHintFarPastTheWindow_IsAnExhaustedQuota) {
  const routing::Verdict v = routing::judge_status(429, true);
  const auto day = judge_throttle_hint(v, std::chrono::hours(20), std::chrono::seconds(60));
  EXPECT_EQ(day.cause, routing::FailureCause::QuotaExhausted);
  EXPECT_TRUE(day.fail_over) << "it still fails over and cools down";
  EXPECT_EQ(day.scope, routing::CooldownScope::Deployment);
  EXPECT_EQ(to_string(day.cause), "quota_exhausted");
  EXPECT_TRUE(is_rate_limit(day.cause));
}

TEST(Outcome, QuotaExhaustedThreshold_IsTwiceTheWindowAndAtLeastAMinute) {
  using namespace std::chrono_literals;
  EXPECT_EQ(routing::quota_exhausted_after(60s), 120s);
  EXPECT_EQ(routing::quota_exhausted_after(1s), 60s);
  const routing::Verdict v = routing::judge_status(429, true);
  EXPECT_EQ(judge_throttle_hint(v, 120s, 60s).cause, routing::FailureCause::Throttled)
      << "at the threshold: a rate limit";
  EXPECT_EQ(judge_throttle_hint(v, 120'001ms, 60s).cause, routing::FailureCause::QuotaExhausted);
  EXPECT_EQ(judge_throttle_hint(v, 59s, 1s).cause, routing::FailureCause::Throttled);
  EXPECT_EQ(judge_throttle_hint(v, 61s, 1s).cause, routing::FailureCause::QuotaExhausted);
  EXPECT_EQ(judge_throttle_hint(v, std::nullopt, 1s).cause, routing::FailureCause::Throttled)
      << "no hint: a rate limit";
}

TEST(Outcome, OnlyA429IsToldApartByItsHint) {
  using namespace std::chrono_literals;
  EXPECT_EQ(judge_throttle_hint(routing::judge_status(503, true), 24h, 60s).cause,
            routing::FailureCause::ServerError);
  EXPECT_FALSE(is_rate_limit(routing::FailureCause::ServerError));
}

}  // namespace outcome_test
}  // namespace smartlb

namespace smartlb {
namespace outcome_test {

TEST(Outcome, CredentialCauseHasAName) {
  EXPECT_EQ(to_string(routing::FailureCause::Credential), "credential");
}

}  // namespace outcome_test
}  // namespace smartlb

namespace smartlb {
namespace outcome_test {

TEST(Outcome, StreamError_FailsOverLikeA5xxOnTheDeployment) {
  const routing::Verdict v = routing::judge_stream_error();
  EXPECT_TRUE(v.fail_over);
  EXPECT_EQ(v.cause, routing::FailureCause::StreamError);
  EXPECT_EQ(v.scope, routing::CooldownScope::Deployment);
  EXPECT_FALSE(is_rate_limit(v.cause));
  EXPECT_EQ(to_string(routing::FailureCause::StreamError), "stream_error");
  EXPECT_EQ(to_string(routing::FailureCause::Stalled), "stalled");
}

}  // namespace outcome_test
}  // namespace smartlb
