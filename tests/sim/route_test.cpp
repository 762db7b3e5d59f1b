#include "smartlb/sim/route.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace {

TEST(ParseRoute, AzureChatCompletionsWithApiVersion) {
  const auto route = parse_route("/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01");
  EXPECT_EQ(route.endpoint, Endpoint::Api);
  EXPECT_EQ(route.style, ApiStyle::Azure);
  EXPECT_EQ(route.operation, Operation::ChatCompletions);
  EXPECT_EQ(route.deployment, "gpt-4o");
  ASSERT_TRUE(route.api_version);
  EXPECT_EQ(*route.api_version, "2024-02-01");
}

TEST(ParseRoute, AzureCompletionsAndEmbeddings) {
  EXPECT_EQ(parse_route("/openai/deployments/d1/completions?api-version=x").operation,
            Operation::Completions);
  const auto embeddings = parse_route("/openai/deployments/emb/embeddings?api-version=x");
  EXPECT_EQ(embeddings.operation, Operation::Embeddings);
  EXPECT_EQ(embeddings.deployment, "emb");
}

TEST(ParseRoute, AzureWithoutApiVersionHasNone) {
  const auto route = parse_route("/openai/deployments/gpt-4o/chat/completions?foo=1");
  EXPECT_EQ(route.endpoint, Endpoint::Api);
  EXPECT_FALSE(route.api_version);
}

TEST(ParseRoute, OpenAIRoutesHaveNoDeploymentInPath) {
  const auto chat = parse_route("/v1/chat/completions");
  EXPECT_EQ(chat.endpoint, Endpoint::Api);
  EXPECT_EQ(chat.style, ApiStyle::OpenAI);
  EXPECT_EQ(chat.operation, Operation::ChatCompletions);
  EXPECT_TRUE(chat.deployment.empty());
  EXPECT_EQ(parse_route("/v1/completions").operation, Operation::Completions);
  EXPECT_EQ(parse_route("/v1/embeddings").operation, Operation::Embeddings);
}

TEST(ParseRoute, ControlEndpoints) {
  EXPECT_EQ(parse_route("/_sim/faults").endpoint, Endpoint::SimFaults);
  EXPECT_EQ(parse_route("/_sim/stats?x=1").endpoint, Endpoint::SimStats);
  EXPECT_EQ(parse_route("/_sim/reset").endpoint, Endpoint::SimReset);
}

TEST(ParseRoute, UnknownPathsAreNotFound) {
  for (const char* target :
       {"/", "/v1/models", "/openai/deployments//chat/completions", "/openai/deployments/gpt-4o",
        "/openai/deployments/gpt-4o/audio", "/v1/chat/completions/extra", "/_sim/other"}) {
    EXPECT_EQ(parse_route(target).endpoint, Endpoint::NotFound) << target;
  }
}

TEST(ParseRoute, DeploymentIsPercentDecoded) {
  EXPECT_EQ(parse_route("/openai/deployments/my%20dep/embeddings?api-version=1").deployment, "my dep");
}

TEST(QueryParameter, FindsDecodedValues) {
  EXPECT_EQ(query_parameter("a=1&api-version=2024%2D02&b", "api-version"), "2024-02");
  EXPECT_EQ(query_parameter("a=1&b", "b"), "");
  EXPECT_FALSE(query_parameter("a=1", "api-version"));
  EXPECT_FALSE(query_parameter("", "a"));
}

TEST(OperationName, MatchesAzureOperationIds) {
  EXPECT_EQ(operation_name(Operation::ChatCompletions), "ChatCompletions_Create");
  EXPECT_EQ(operation_name(Operation::Completions), "Completions_Create");
  EXPECT_EQ(operation_name(Operation::Embeddings), "Embeddings_Create");
}

}  // namespace
}  // namespace smartlb::sim
