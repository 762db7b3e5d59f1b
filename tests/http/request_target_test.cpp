#include "smartlb/http/request_target.hpp"

#include "smartlb/http/api_family.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace request_target_test {  // named, not anonymous: tests/CMakeLists.txt

// append_upstream_target appends: what the buffer held stays in front.
std::string upstream_target(std::string_view base, const http::RequestTarget& t,
                            std::string_view deployment) {
  std::string out = "POST ";
  append_upstream_target(out, base, t, deployment);
  EXPECT_EQ(out.substr(0, 5), "POST ");
  return out.substr(5);
}

TEST(RequestTarget, AzurePathExposesDeployment) {
  auto t = http::parse_request_target("/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->deployment, "gpt-4o");
  EXPECT_EQ(t->path, "/openai/deployments/gpt-4o/chat/completions");
  EXPECT_EQ(t->query, "api-version=2024-06-01");
}

TEST(RequestTarget, OpenAiPathHasNoDeployment) {
  auto t = http::parse_request_target("/v1/chat/completions");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->has_deployment());
  EXPECT_EQ(upstream_target("", *t, "ignored"), "/v1/chat/completions");
}

TEST(RequestTarget, RewritesExactlyTheDeploymentSegment) {
  // The name appears again later in the path and in the query: only the segment changes.
  auto t = http::parse_request_target("/openai/deployments/gpt/chat/gpt?x=gpt&api-version=1");
  ASSERT_TRUE(t);
  EXPECT_EQ(upstream_target("", *t, "prod-4o"), "/openai/deployments/prod-4o/chat/gpt?x=gpt&api-version=1");
}

TEST(RequestTarget, KeepsPathWithoutOverride) {
  auto t = http::parse_request_target("/openai/deployments/gpt/embeddings?api-version=1");
  EXPECT_EQ(upstream_target("/base", *t, ""), "/base/openai/deployments/gpt/embeddings?api-version=1");
}

TEST(RequestTarget, OperationsWithoutDeploymentPassUnchanged) {
  auto t = http::parse_request_target("/openai/files?api-version=2024-06-01");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->has_deployment());
  EXPECT_EQ(upstream_target("", *t, "prod"), "/openai/files?api-version=2024-06-01");
}

TEST(RequestTarget, RejectsNonOriginForms) {
  EXPECT_FALSE(http::parse_request_target("http://evil/x"));
  EXPECT_FALSE(http::parse_request_target("*"));
  EXPECT_FALSE(http::parse_request_target(""));
  EXPECT_FALSE(http::parse_request_target("/a b"));
}

TEST(ApiFamily, FromThePathAlone) {
  EXPECT_EQ(http::api_family("/openai/deployments/gpt/chat/completions"), http::ApiFamily::Azure);
  EXPECT_EQ(http::api_family("/openai/v1/responses"), http::ApiFamily::Azure);
  EXPECT_EQ(http::api_family("/openai"), http::ApiFamily::Azure);
  EXPECT_EQ(http::api_family("/anthropic/v1/messages"), http::ApiFamily::Anthropic);
  EXPECT_EQ(http::api_family("/v1/messages"), http::ApiFamily::Anthropic);
  EXPECT_EQ(http::api_family("/v1/messages/count_tokens"), http::ApiFamily::Anthropic);
  EXPECT_EQ(http::api_family("/v1/chat/completions"), http::ApiFamily::OpenAI);
  EXPECT_EQ(http::api_family("/v1/messagesx"), http::ApiFamily::OpenAI);
  EXPECT_EQ(http::api_family("/openaix/v1"), http::ApiFamily::OpenAI);
}

}  // namespace request_target_test
}  // namespace smartlb
