#include "smartlb/sim/deployment_spec.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace {

TEST(ParseDeploymentSpec, NameTpmRpm) {
  std::string error;
  const auto spec = parse_deployment_spec("gpt-4o-mini:30000:180", error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->name, "gpt-4o-mini");
  EXPECT_EQ(spec->limits.tokens_per_minute, 30000);
  EXPECT_EQ(spec->limits.requests_per_minute, 180);
}

TEST(ParseDeploymentSpec, RpmDerivedAzureStyleWhenOmitted) {
  std::string error;
  EXPECT_EQ(parse_deployment_spec("d:30000", error)->limits.requests_per_minute, 180);
  EXPECT_EQ(parse_deployment_spec("d:10", error)->limits.requests_per_minute, 1);
  EXPECT_EQ(parse_deployment_spec("d:0", error)->limits.requests_per_minute, 0);
}

TEST(ParseDeploymentSpec, RejectsMalformed) {
  for (const char* bad :
       {"", "gpt", ":1:1", "a:x:1", "a:1:y", "a:1:2:3", "a:-1:1", "a/b:1:1", "a:1:", "a:2000000000000:1"}) {
    std::string error;
    EXPECT_FALSE(parse_deployment_spec(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(DefaultDeployment, IsGpt4oWithLargeLimits) {
  const auto spec = default_deployment();
  EXPECT_EQ(spec.name, "gpt-4o");
  EXPECT_GE(spec.limits.tokens_per_minute, 1'000'000'000);
  EXPECT_GE(spec.limits.requests_per_minute, 1'000'000);
}

}  // namespace
}  // namespace smartlb::sim
