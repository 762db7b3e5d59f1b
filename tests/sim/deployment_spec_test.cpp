#include "smartlb/sim/deployment_spec.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace deployment_spec_test {  // named, not anonymous: tests/CMakeLists.txt

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

TEST(ParseDeploymentSpec, ThinksNotByDefault) {
  std::string error;
  EXPECT_EQ(parse_deployment_spec("d:1:1", error)->reasoning_wait, std::chrono::milliseconds(0));
}

TEST(ParseReasoningSpec, NameAndSecondsFractionalAllowed) {
  using namespace std::chrono_literals;
  std::string error;
  const auto spec = parse_reasoning_spec("o3:2.5", error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->deployment, "o3");
  EXPECT_EQ(spec->wait, 2'500ms);
  EXPECT_EQ(parse_reasoning_spec("o3:0", error)->wait, 0ms);
  EXPECT_EQ(parse_reasoning_spec("o3:30", error)->wait, 30s);
}

TEST(ParseReasoningSpec, RejectsMalformed) {
  for (const char* bad : {"", "o3", ":2", "o3:", "o3:x", "o3:-1", "o3:1s", "o3:86401", "o3:nan"}) {
    std::string error;
    EXPECT_FALSE(parse_reasoning_spec(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(DefaultDeployment, IsGpt4oWithLargeLimits) {
  const auto spec = default_deployment();
  EXPECT_EQ(spec.name, "gpt-4o");
  EXPECT_GE(spec.limits.tokens_per_minute, 1'000'000'000);
  EXPECT_GE(spec.limits.requests_per_minute, 1'000'000);
}

}  // namespace deployment_spec_test
}  // namespace smartlb::sim
