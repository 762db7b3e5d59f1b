#include "smartlb/http/request_body.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "json_generator.hpp"
#include "smartlb/http/json_body.hpp"

namespace smartlb {
namespace request_body_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr std::string_view kChat = "/v1/chat/completions";

TEST(ApiOperation, ByThePathsEnding) {
  EXPECT_EQ(http::api_operation("/openai/deployments/d/chat/completions"),
            http::ApiOperation::ChatCompletions);
  EXPECT_EQ(http::api_operation("/v1/chat/completions"), http::ApiOperation::ChatCompletions);
  EXPECT_EQ(http::api_operation("/v1/completions"), http::ApiOperation::Completions);
  EXPECT_EQ(http::api_operation("/openai/v1/embeddings"), http::ApiOperation::Embeddings);
  EXPECT_EQ(http::api_operation("/v1/responses"), http::ApiOperation::Responses);
  EXPECT_EQ(http::api_operation("/v1/images/generations"), http::ApiOperation::Other);
  EXPECT_EQ(http::api_operation("/v1/responses/resp_1"), http::ApiOperation::Other);
}

TEST(RequestBody, ReadsTheModelAndTheAffinityKeysRaw) {
  const auto f = http::read_request_body(
      kChat, R"({"messages":[],"model":"gpt-4o","user":"u\"1","prompt_cache_key":"k","stream":true})");
  EXPECT_TRUE(f.json_object);
  EXPECT_EQ(f.model, "gpt-4o");
  EXPECT_EQ(f.user, R"(u\"1)");
  EXPECT_EQ(f.prompt_cache_key, "k");
  EXPECT_EQ(f.operation, http::ApiOperation::ChatCompletions);
}

TEST(RequestBody, ReadsWhetherTheAnswerStreamsAndTheReasoningEffort) {
  auto f = http::read_request_body(kChat, R"({"messages":[],"stream":true,"reasoning_effort":"high"})");
  EXPECT_TRUE(f.stream);
  EXPECT_EQ(f.reasoning_effort, "high");
  f = http::read_request_body(
      "/v1/responses", R"({"input":"x","reasoning":{"summary":"auto","effort":"low"},"stream":false})");
  EXPECT_FALSE(f.stream);
  EXPECT_EQ(f.reasoning_effort, "low");
  f = http::read_request_body(kChat,
                              R"({"messages":[{"role":"user","content":"x","effort":"no"}],"stream":"yes"})");
  EXPECT_FALSE(f.stream) << "only the literal true";
  EXPECT_EQ(f.reasoning_effort, std::nullopt) << "an effort elsewhere is not the request's";
}

TEST(RequestBody, ClaudesMessagesCountTheSystemTheMessagesAndTheTools) {
  EXPECT_EQ(http::api_operation("/anthropic/v1/messages"), http::ApiOperation::Messages);
  EXPECT_EQ(http::api_operation("/v1/messages/count_tokens"), http::ApiOperation::Messages);
  const auto f = http::read_request_body(
      "/v1/messages",
      R"({"model":"claude-sonnet-4-5","max_tokens":1024,"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"Hello"}]}],)"
      R"("tools":[{"name":"get","description":"Get it"}],"thinking":{"type":"enabled","budget_tokens":2000},"stream":true})");
  EXPECT_EQ(f.model, "claude-sonnet-4-5");
  EXPECT_EQ(f.max_tokens, 1024);
  EXPECT_TRUE(f.stream);
  EXPECT_EQ(f.reasoning_effort, "thinking");
  // "Be brief." (9) + "Hello" (5, a message's text) + "get" (3) + "Get it" (6): every string of
  // the tools, a message's text and content.
  EXPECT_EQ(f.prompt_characters, 23u);
}

TEST(RequestBody, TheLastDuplicateCountsAndOnlyAStringIsText) {
  const auto f = http::read_request_body(
      kChat, R"({"model":"a","user":"u","model":"b","user":1,"prompt_cache_key":null})");
  EXPECT_EQ(f.model, "b");
  EXPECT_EQ(f.user, std::nullopt);
  EXPECT_EQ(f.prompt_cache_key, std::nullopt);
}

TEST(RequestBody, NestedMembersAreNotTheRequests) {
  const auto f = http::read_request_body(
      kChat, R"({"metadata":{"model":"x","user":"y","max_tokens":9},"messages":[{"model":"z"}]})");
  EXPECT_TRUE(f.json_object);
  EXPECT_EQ(f.model, std::nullopt);
  EXPECT_EQ(f.user, std::nullopt);
  EXPECT_EQ(f.max_tokens, 0);
}

TEST(RequestBody, KeysMeanWhatTheySpell) {
  const auto f = http::read_request_body(kChat, R"({"mod\u0065l":"m","\u0075ser":"u","max_tok\u0065ns":5})");
  EXPECT_EQ(f.model, "m");
  EXPECT_EQ(f.user, "u");
  EXPECT_EQ(f.max_tokens, 5);
}

TEST(RequestBody, AnInvalidBodyHasNoFactsEvenWhereTheyCameFirst) {
  for (const std::string_view body :
       {R"({"model":"m","user":"u","messages":["abcd"],"max_tokens":5,)", R"({"model":"m"} x)",
        R"(["model","m"])", "", "not json", R"({"model":"m","n":1e400})"}) {
    SCOPED_TRACE(body);
    const auto f = http::read_request_body(kChat, body);
    EXPECT_FALSE(f.json_object);
    EXPECT_EQ(f.model, std::nullopt);
    EXPECT_EQ(f.user, std::nullopt);
    EXPECT_EQ(f.prompt_characters, 0u);
    EXPECT_EQ(f.max_tokens, 0);
    EXPECT_EQ(f.body_size, body.size());
    EXPECT_EQ(f.operation, http::ApiOperation::ChatCompletions);
  }
}

TEST(RequestBody, ThePromptIsTheOperationsMember) {
  const std::string body =
      R"({"messages":[{"role":"system","content":"12345678"},{"role":"user","content":[{"type":"text","text":"ab\u00e9"}]}],)"
      R"("prompt":"xx","input":["yyy",[1,2]],"content":"zzzz"})";
  EXPECT_EQ(http::read_request_body("/v1/chat/completions", body).prompt_characters, 8u + 4);
  EXPECT_EQ(http::read_request_body("/v1/completions", body).prompt_characters, 2u);
  EXPECT_EQ(http::read_request_body("/v1/embeddings", body).prompt_characters, 3u + 4 + 4);
  EXPECT_EQ(http::read_request_body("/v1/responses", body).prompt_characters, 3u + 4 + 4);
  EXPECT_EQ(http::read_request_body("/v1/images/generations", body).prompt_characters, 0u);
}

TEST(RequestBody, InsideThePromptOnlyTextAndContentMembersOfObjectsCount) {
  EXPECT_EQ(
      http::read_request_body(kChat, R"({"messages":{"other":{"text":"abcdefghi"}}})").prompt_characters, 0u);
  EXPECT_EQ(
      http::read_request_body(kChat, R"({"messages":{"content":{"text":"abcdefghi"}}})").prompt_characters,
      9u);
  EXPECT_EQ(http::read_request_body(kChat, R"({"messages":[[["abc",1]]],"messages":"de"})").prompt_characters,
            3u + 4 + 2);
  EXPECT_EQ(http::read_request_body(kChat, R"({"messages":[1.5,true,null,-3,18446744073709551616]})")
                .prompt_characters,
            4u)
      << "only an integer nlohmann would hold counts";
  EXPECT_EQ(http::read_request_body(kChat, R"({"messages":[{"tool_calls":[{"text":"abc"}]}],"x":"yyyy"})")
                .prompt_characters,
            0u);
}

TEST(RequestBody, TheFirstPositiveIntegerOfEachBudget) {
  const auto f = http::read_request_body(
      kChat,
      R"({"max_tokens":0,"max_tokens":7,"max_tokens":9,"max_completion_tokens":-1,"max_completion_tokens":2.0,)"
      R"("max_output_tokens":[5],"max_output_tokens":"5"})");
  EXPECT_EQ(f.max_tokens, 7);
  EXPECT_EQ(f.max_completion_tokens, 0);
  EXPECT_EQ(f.max_output_tokens, 0);
  EXPECT_EQ(http::read_request_body(kChat, R"({"max_tokens":18446744073709551615})").max_tokens, INT64_MAX);
  EXPECT_EQ(http::read_request_body(kChat, R"({"max_tokens":18446744073709551616})").max_tokens, 0)
      << "past uint64: a double to nlohmann";
}

// The facts agree with nlohmann's DOM, and with top_level_strings (the reader of the same
// members that the body rewrite uses).
void expect_facts_agree(std::string_view body) {
  SCOPED_TRACE(testing::PrintToString(std::string(body)));
  const http::RequestBodyFacts f = http::read_request_body(kChat, body);
  static constexpr std::string_view kKeys[] = {"model", "user", "prompt_cache_key"};
  std::optional<std::string_view> strings[3];
  EXPECT_EQ(http::top_level_strings(body, kKeys, strings), f.json_object);
  EXPECT_EQ(strings[0], f.model);
  EXPECT_EQ(strings[1], f.user);
  EXPECT_EQ(strings[2], f.prompt_cache_key);

  const nlohmann::json dom = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const bool nul = body.find('\0') != std::string_view::npos;  // nlohmann ends its input there
  if (!nul) {
    EXPECT_EQ(f.json_object, dom.is_object());
  }
  if (!f.json_object) return;
  const std::optional<std::string_view> facts[] = {f.model, f.user, f.prompt_cache_key};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto it = dom.find(kKeys[i]);
    ASSERT_EQ(facts[i].has_value(), it != dom.end() && it->is_string()) << kKeys[i];
    if (facts[i]) {
      EXPECT_EQ(nlohmann::json::parse("\"" + std::string(*facts[i]) + "\""), *it);
    }
  }
}

TEST(RequestBodyDifferential, RandomBodiesAgreeWithNlohmannAndTopLevelStrings) {
  JsonGenerator gen(0xB0D1B0D1ULL);
  int objects = 0;
  for (int i = 0; i < 20'000; ++i) {
    const std::string body = gen.body();
    expect_facts_agree(body);
    if (http::read_request_body(kChat, body).json_object) ++objects;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(objects, 4000);
}

}  // namespace request_body_test
}  // namespace smartlb
