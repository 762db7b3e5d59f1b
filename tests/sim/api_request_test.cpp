#include "smartlb/sim/api_request.hpp"
#include "smartlb/sim/token_estimate.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace api_request_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(TokensFromCharacters, QuarterOfCharactersAtLeastOne) {
  EXPECT_EQ(tokens_from_characters(0), 1);
  EXPECT_EQ(tokens_from_characters(3), 1);
  EXPECT_EQ(tokens_from_characters(8), 2);
  EXPECT_EQ(tokens_from_characters(401), 100);
}

TEST(PromptCharacters, ChatCountsEveryMessageContentIncludingParts) {
  const auto body = nlohmann::json::parse(R"({"messages":[
      {"role":"system","content":"12345678"},
      {"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url","image_url":{}}]},
      {"role":"assistant","content":null}]})");
  EXPECT_EQ(prompt_characters(Operation::ChatCompletions, body), 12u);
}

TEST(PromptCharacters, CompletionsPromptStringOrArray) {
  EXPECT_EQ(prompt_characters(Operation::Completions, nlohmann::json::parse(R"({"prompt":"abcdef"})")), 6u);
  EXPECT_EQ(prompt_characters(Operation::Completions, nlohmann::json::parse(R"({"prompt":["ab","cde"]})")),
            5u);
}

TEST(PromptCharacters, EmbeddingsInputTextOrTokens) {
  EXPECT_EQ(prompt_characters(Operation::Embeddings, nlohmann::json::parse(R"({"input":"abcdefgh"})")), 8u);
  EXPECT_EQ(prompt_characters(Operation::Embeddings, nlohmann::json::parse(R"({"input":[1,2,3]})")), 12u);
}

TEST(ParseApiRequest, ChatCostIsPromptTokensPlusMaxTokens) {
  const auto parsed = parse_api_request(
      Operation::ChatCompletions,
      R"({"model":"m","messages":[{"role":"user","content":"0123456789abcdef"}],"max_tokens":100})");
  ASSERT_TRUE(parsed.request) << parsed.error;
  EXPECT_EQ(parsed.request->model, "m");
  EXPECT_EQ(parsed.request->prompt_tokens, 4);
  EXPECT_EQ(parsed.request->max_tokens, 100);
  EXPECT_EQ(parsed.request->cost(), 104);
  EXPECT_FALSE(parsed.request->stream);
}

TEST(ParseApiRequest, MissingMaxTokensUsesTheDefault) {
  const auto parsed = parse_api_request(Operation::ChatCompletions, R"({"messages":[{"content":"hi"}]})", 16);
  ASSERT_TRUE(parsed.request);
  EXPECT_EQ(parsed.request->max_tokens, 16);
  EXPECT_EQ(parsed.request->cost(), 17);
}

TEST(ParseApiRequest, MaxCompletionTokensIsAccepted) {
  const auto parsed =
      parse_api_request(Operation::ChatCompletions, R"({"messages":[],"max_completion_tokens":7})");
  ASSERT_TRUE(parsed.request);
  EXPECT_EQ(parsed.request->max_tokens, 7);
}

TEST(ParseApiRequest, StreamAndIncludeUsage) {
  const auto parsed = parse_api_request(
      Operation::Completions, R"({"prompt":"x","stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_TRUE(parsed.request);
  EXPECT_TRUE(parsed.request->stream);
  EXPECT_TRUE(parsed.request->include_usage);
}

TEST(ParseApiRequest, EmbeddingsCostIsInputTokensOnly) {
  const auto parsed = parse_api_request(Operation::Embeddings,
                                        R"({"input":["aaaaaaaa","bbbb"],"max_tokens":50,"stream":true})");
  ASSERT_TRUE(parsed.request);
  EXPECT_EQ(parsed.request->max_tokens, 0);
  EXPECT_FALSE(parsed.request->stream);
  EXPECT_EQ(parsed.request->input_count, 2);
  EXPECT_EQ(parsed.request->cost(), 3);
}

TEST(ParseApiRequest, RejectsInvalidBodies) {
  EXPECT_FALSE(parse_api_request(Operation::ChatCompletions, "not json").request);
  EXPECT_FALSE(parse_api_request(Operation::ChatCompletions, "[1]").request);
  EXPECT_FALSE(parse_api_request(Operation::ChatCompletions, R"({"model":"m"})").request);
  EXPECT_FALSE(parse_api_request(Operation::Completions, R"({"model":"m"})").request);
  EXPECT_FALSE(parse_api_request(Operation::Embeddings, R"({"model":"m"})").request);
  EXPECT_FALSE(parse_api_request(Operation::ChatCompletions, R"({"messages":[],"max_tokens":0})").request);
  EXPECT_FALSE(parse_api_request(Operation::ChatCompletions, R"({"messages":[],"stream":"yes"})").request);
  const auto error = parse_api_request(Operation::ChatCompletions, R"({"model":1,"messages":[]})");
  EXPECT_FALSE(error.request);
  EXPECT_NE(error.error.find("model"), std::string::npos);
}

}  // namespace api_request_test
}  // namespace smartlb::sim
