#include "smartlb/routing/outcome.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

TEST(Outcome, ThrottlingAndServerErrorsFailOverPerDeployment) {
  for (unsigned s : {429u, 500u, 502u, 503u, 504u}) {
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

}  // namespace
}  // namespace smartlb

namespace smartlb {
namespace {

TEST(Outcome, CredentialCauseHasAName) { EXPECT_EQ(to_string(FailureCause::Credential), "credential"); }

}  // namespace
}  // namespace smartlb
