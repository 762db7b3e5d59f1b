#include "smartlb/sim/error_bodies.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace error_bodies_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(OpenAIErrorBody, HasCodeMessageTypeParam) {
  const auto body = nlohmann::json::parse(openai_error_body("BadRequest", "nope"));
  EXPECT_EQ(body["error"]["code"], "BadRequest");
  EXPECT_EQ(body["error"]["message"], "nope");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(body["error"]["param"].is_null());
}

TEST(RetryAfterSeconds, CeilingAtLeastOne) {
  EXPECT_EQ(retry_after_seconds(1ms), 1);
  EXPECT_EQ(retry_after_seconds(1000ms), 1);
  EXPECT_EQ(retry_after_seconds(1001ms), 2);
  EXPECT_EQ(retry_after_seconds(0ms), 1);
  EXPECT_EQ(retry_after_seconds(59'470ms), 60);
}

TEST(RateLimitBody, AzureShapeAndMessage) {
  const auto body = nlohmann::json::parse(
      rate_limit_body(Operation::ChatCompletions, "2024-02-01", RateLimitKind::Tokens, 5'200ms));
  EXPECT_EQ(body["error"].size(), 2u);
  EXPECT_EQ(body["error"]["code"], "429");
  const auto message = body["error"]["message"].get<std::string>();
  EXPECT_TRUE(
      message.starts_with("Requests to the ChatCompletions_Create Operation under Azure "
                          "OpenAI API version 2024-02-01 have exceeded token rate limit"))
      << message;
  EXPECT_NE(message.find("Please retry after 6 seconds."), std::string::npos) << message;
}

TEST(RateLimitBody, CallRateLimitWording) {
  const auto body =
      nlohmann::json::parse(rate_limit_body(Operation::Embeddings, "v", RateLimitKind::Requests, 1ms));
  const auto message = body["error"]["message"].get<std::string>();
  EXPECT_NE(message.find("Embeddings_Create"), std::string::npos);
  EXPECT_NE(message.find("exceeded call rate limit"), std::string::npos);
  EXPECT_NE(message.find("retry after 1 seconds"), std::string::npos);
}

TEST(FixedErrorBodies, UnauthorizedAndDeploymentNotFound) {
  EXPECT_EQ(nlohmann::json::parse(unauthorized_body())["error"]["code"], "401");
  EXPECT_EQ(nlohmann::json::parse(deployment_not_found_body())["error"]["code"], "DeploymentNotFound");
}

}  // namespace error_bodies_test
}  // namespace smartlb::sim
