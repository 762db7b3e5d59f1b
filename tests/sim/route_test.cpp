#include "smartlb/sim/route.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace route_test {  // named, not anonymous: tests/CMakeLists.txt

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

TEST(ParseRoute, AzureV1ChatIsOpenAIStyle) {
  const auto chat = parse_route("/openai/v1/chat/completions");
  EXPECT_EQ(chat.endpoint, Endpoint::Api);
  EXPECT_EQ(chat.style, ApiStyle::OpenAI);
  EXPECT_EQ(chat.operation, Operation::ChatCompletions);
  // Azure's style without a deployment has no chat completions.
  EXPECT_EQ(parse_route("/openai/chat/completions?api-version=1").endpoint, Endpoint::NotFound);
}

TEST(ParseRoute, StatefulCollectionsInEveryStyle) {
  for (const auto& [target, style] :
       {std::pair{"/openai/responses?api-version=2025-04-01-preview", ApiStyle::Azure},
        {"/openai/v1/responses", ApiStyle::OpenAI},
        {"/v1/responses", ApiStyle::OpenAI}}) {
    const auto route = parse_route(target);
    EXPECT_EQ(route.endpoint, Endpoint::Stateful) << target;
    EXPECT_EQ(route.style, style) << target;
    EXPECT_EQ(route.collection, Collection::Responses) << target;
    EXPECT_EQ(route.object_id, "") << target;
    EXPECT_EQ(route.action, "") << target;
  }
  const auto azure = parse_route("/openai/files?api-version=2024-10-21&purpose=batch");
  EXPECT_EQ(azure.collection, Collection::Files);
  EXPECT_EQ(azure.api_version, "2024-10-21");
  EXPECT_EQ(azure.query, "api-version=2024-10-21&purpose=batch");
  EXPECT_EQ(parse_route("/v1/batches").collection, Collection::Batches);
}

TEST(ParseRoute, StatefulObjectsAndActions) {
  const auto items = parse_route("/openai/v1/responses/resp_1/input_items?limit=2");
  EXPECT_EQ(items.endpoint, Endpoint::Stateful);
  EXPECT_EQ(items.object_id, "resp_1");
  EXPECT_EQ(items.action, "input_items");
  EXPECT_EQ(items.query, "limit=2");
  EXPECT_EQ(parse_route("/v1/responses/resp_1/cancel").action, "cancel");
  EXPECT_EQ(parse_route("/openai/files/file-1/content?api-version=1").action, "content");
  EXPECT_EQ(parse_route("/v1/batches/batch_1/cancel").action, "cancel");
  EXPECT_EQ(parse_route("/v1/files/file%2D1").object_id, "file-1");
}

TEST(ParseRoute, StatefulPathsThatAreNotRoutes) {
  for (const char* target :
       {"/v1/responses/", "/v1/responses//cancel", "/v1/responses/r/content", "/v1/files/f/cancel",
        "/v1/batches/b/content", "/v1/responses/r/cancel/more", "/v1/vector_stores",
        "/openai/deployments/gpt-4o/responses?api-version=1", "/openai/v1/files/f/"}) {
    EXPECT_EQ(parse_route(target).endpoint, Endpoint::NotFound) << target;
  }
}

TEST(ParseRoute, RealtimeTakesItsDeploymentFromTheQuery) {
  const auto azure = parse_route("/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-rt");
  EXPECT_EQ(azure.endpoint, Endpoint::Realtime);
  EXPECT_EQ(azure.style, ApiStyle::Azure);
  EXPECT_EQ(azure.deployment, "gpt-rt");
  const auto v1 = parse_route("/openai/v1/realtime?model=gpt-rt");
  EXPECT_EQ(v1.endpoint, Endpoint::Realtime);
  EXPECT_EQ(v1.style, ApiStyle::OpenAI);
  EXPECT_EQ(v1.deployment, "gpt-rt");
  EXPECT_EQ(parse_route("/v1/realtime?model=m").deployment, "m");
  EXPECT_EQ(parse_route("/v1/realtime").deployment, "");
  EXPECT_EQ(parse_route("/openai/deployments/d/realtime?api-version=1").endpoint, Endpoint::NotFound);
}

TEST(ParseRoute, MessagesUnderV1AndFoundrysAnthropicPrefix) {
  for (const char* target : {"/v1/messages", "/anthropic/v1/messages?beta=true"}) {
    const auto route = parse_route(target);
    EXPECT_EQ(route.endpoint, Endpoint::Messages) << target;
    EXPECT_EQ(route.action, "") << target;
    EXPECT_TRUE(route.deployment.empty()) << target;  // the body's model
  }
  for (const char* target : {"/v1/messages/count_tokens", "/anthropic/v1/messages/count_tokens"}) {
    const auto route = parse_route(target);
    EXPECT_EQ(route.endpoint, Endpoint::Messages) << target;
    EXPECT_EQ(route.action, "count_tokens") << target;
  }
}

TEST(ParseRoute, ModelsListsWhereHealthProbesAsk) {
  const auto azure = parse_route("/openai/models?api-version=2024-10-21");
  EXPECT_EQ(azure.endpoint, Endpoint::Models);
  EXPECT_EQ(azure.style, ApiStyle::Azure);
  EXPECT_EQ(azure.api_version, "2024-10-21");
  for (const char* target : {"/v1/models", "/openai/v1/models", "/anthropic/v1/models"}) {
    const auto route = parse_route(target);
    EXPECT_EQ(route.endpoint, Endpoint::Models) << target;
    EXPECT_EQ(route.style, ApiStyle::OpenAI) << target;
  }
}

TEST(CollectionName, IsThePathSegment) {
  EXPECT_EQ(collection_name(Collection::Responses), "responses");
  EXPECT_EQ(collection_name(Collection::Files), "files");
  EXPECT_EQ(collection_name(Collection::Batches), "batches");
}

TEST(ParseRoute, ControlEndpoints) {
  EXPECT_EQ(parse_route("/_sim/faults").endpoint, Endpoint::SimFaults);
  EXPECT_EQ(parse_route("/_sim/stats?x=1").endpoint, Endpoint::SimStats);
  EXPECT_EQ(parse_route("/_sim/reset").endpoint, Endpoint::SimReset);
}

TEST(ParseRoute, UnknownPathsAreNotFound) {
  for (const char* target :
       {"/", "/v1/models/gpt-4o", "/openai/deployments//chat/completions", "/openai/deployments/gpt-4o",
        "/openai/deployments/gpt-4o/audio", "/v1/chat/completions/extra", "/_sim/other",
        "/openai/v1/messages", "/openai/messages", "/v1/messages/batches", "/anthropic/v1/chat/completions",
        "/anthropic/v1/responses", "/anthropic/messages", "/openai/deployments/gpt-4o/models"}) {
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

}  // namespace route_test
}  // namespace smartlb::sim
