#include "smartlb/routing/outcome.hpp"

#include <chrono>

#include <gtest/gtest.h>

namespace smartlb {
namespace {

TEST(Outcome, ThrottlingAndServerErrorsFailOverPerDeployment) {
  for (unsigned s : {429u, 500u, 502u, 503u, 504u, 529u}) {  // 529: Anthropic's overloaded_error
    const auto v = judge_status(s, true);
    EXPECT_TRUE(v.fail_over) << s;
    EXPECT_EQ(v.scope, CooldownScope::Deployment) << s;
  }
  EXPECT_EQ(judge_status(429, true).cause, FailureCause::Throttled);
}

TEST(Outcome, CredentialErrorsFailOverForTheWholeBackend) {
  for (unsigned s : {401u, 403u}) {
    const auto v = judge_status(s, true);
    EXPECT_TRUE(v.fail_over);
    EXPECT_EQ(v.cause, FailureCause::AuthRejected);
    EXPECT_EQ(v.scope, CooldownScope::Backend);
  }
}

TEST(Outcome, NotFoundFailsOverOnlyOnDeploymentPaths) {
  EXPECT_TRUE(judge_status(404, true).fail_over);
  EXPECT_FALSE(judge_status(404, false).fail_over);
}

TEST(Outcome, ClientErrorsAndSuccessPassThrough) {
  for (unsigned s : {200u, 201u, 204u, 301u, 400u, 408u, 409u, 413u, 422u, 501u})
    EXPECT_FALSE(judge_status(s, true).fail_over) << s;
}

TEST(Outcome, TransportFailuresFailOverForTheWholeBackend) {
  for (auto f : {TransportFailure::Connect, TransportFailure::Tls, TransportFailure::Timeout,
                 TransportFailure::Lost, TransportFailure::Protocol}) {
    const auto v = judge_transport(f);
    EXPECT_TRUE(v.fail_over);
    EXPECT_EQ(v.scope, CooldownScope::Backend);
  }
  EXPECT_EQ(judge_transport(TransportFailure::Timeout).cause, FailureCause::Timeout);
}

TEST(Outcome, A429WithAHintFarPastTheWindow_IsAnExhaustedQuota) {
  const Verdict v = judge_status(429, true);
  const auto day = judge_throttle_hint(v, std::chrono::hours(20), std::chrono::seconds(60));
  EXPECT_EQ(day.cause, FailureCause::QuotaExhausted);
  EXPECT_TRUE(day.fail_over) << "it still fails over and cools down";
  EXPECT_EQ(day.scope, CooldownScope::Deployment);
  EXPECT_EQ(to_string(day.cause), "quota_exhausted");
  EXPECT_TRUE(is_rate_limit(day.cause));
}

TEST(Outcome, QuotaExhaustedThreshold_IsTwiceTheWindowAndAtLeastAMinute) {
  using namespace std::chrono_literals;
  EXPECT_EQ(quota_exhausted_after(60s), 120s);
  EXPECT_EQ(quota_exhausted_after(1s), 60s);
  const Verdict v = judge_status(429, true);
  EXPECT_EQ(judge_throttle_hint(v, 120s, 60s).cause, FailureCause::Throttled)
      << "at the threshold: a rate limit";
  EXPECT_EQ(judge_throttle_hint(v, 120'001ms, 60s).cause, FailureCause::QuotaExhausted);
  EXPECT_EQ(judge_throttle_hint(v, 59s, 1s).cause, FailureCause::Throttled);
  EXPECT_EQ(judge_throttle_hint(v, 61s, 1s).cause, FailureCause::QuotaExhausted);
  EXPECT_EQ(judge_throttle_hint(v, std::nullopt, 1s).cause, FailureCause::Throttled)
      << "no hint: a rate limit";
}

TEST(Outcome, OnlyA429IsToldApartByItsHint) {
  using namespace std::chrono_literals;
  EXPECT_EQ(judge_throttle_hint(judge_status(503, true), 24h, 60s).cause, FailureCause::ServerError);
  EXPECT_FALSE(is_rate_limit(FailureCause::ServerError));
}

}  // namespace
}  // namespace smartlb

namespace smartlb {
namespace {

TEST(Outcome, CredentialCauseHasAName) { EXPECT_EQ(to_string(FailureCause::Credential), "credential"); }

}  // namespace
}  // namespace smartlb

namespace smartlb {
namespace {

TEST(Outcome, StreamError_FailsOverLikeA5xxOnTheDeployment) {
  const Verdict v = judge_stream_error();
  EXPECT_TRUE(v.fail_over);
  EXPECT_EQ(v.cause, FailureCause::StreamError);
  EXPECT_EQ(v.scope, CooldownScope::Deployment);
  EXPECT_FALSE(is_rate_limit(v.cause));
  EXPECT_EQ(to_string(FailureCause::StreamError), "stream_error");
  EXPECT_EQ(to_string(FailureCause::Stalled), "stalled");
}

}  // namespace
}  // namespace smartlb
