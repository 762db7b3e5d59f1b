#include "smartlb/sim/messages_request.hpp"
#include "smartlb/sim/token_estimate.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace messages_request_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(MessagesPromptCharacters, CountsSystemMessagesBlocksAndTools) {
  const auto body = nlohmann::json::parse(R"({
      "system":[{"type":"text","text":"12345678"}],
      "messages":[
        {"role":"user","content":"abcd"},
        {"role":"assistant","content":[{"type":"text","text":"ef"},{"type":"tool_use","id":"t","name":"n","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ghi"}]},
                                  {"type":"tool_result","tool_use_id":"u","content":"jk"}]}],
      "tools":[{"name":"n"}]})");
  EXPECT_EQ(messages_prompt_characters(body),
            8u + 4u + 2u + 3u + 2u + std::string(R"([{"name":"n"}])").size());
}

TEST(MessagesPromptCharacters, SystemMayBeAString) {
  EXPECT_EQ(messages_prompt_characters(nlohmann::json::parse(R"({"system":"abcdef","messages":[]})")), 6u);
}

TEST(ParseMessagesRequest, CreateReadsModelStreamMaxTokensAndEstimatesInput) {
  const auto parsed = parse_messages_request(
      R"({"model":"claude","max_tokens":100,"stream":true,"system":"12345678",
          "messages":[{"role":"user","content":"0123456789abcdef"}]})",
      false);
  ASSERT_TRUE(parsed.request) << parsed.error;
  EXPECT_EQ(parsed.request->model, "claude");
  EXPECT_TRUE(parsed.request->stream);
  EXPECT_EQ(parsed.request->max_tokens, 100);
  EXPECT_EQ(parsed.request->input_tokens, 6);  // 24 bytes / 4
  EXPECT_EQ(parsed.request->cost(), 106);
}

TEST(ParseMessagesRequest, InputIsAtLeastOneToken) {
  const auto parsed = parse_messages_request(R"({"model":"m","max_tokens":1,"messages":[]})", false);
  ASSERT_TRUE(parsed.request) << parsed.error;
  EXPECT_FALSE(parsed.request->stream);
  EXPECT_EQ(parsed.request->input_tokens, 1);
}

TEST(ParseMessagesRequest, MaxTokensIsRequiredToCreate) {
  const auto parsed = parse_messages_request(R"({"model":"m","messages":[]})", false);
  EXPECT_FALSE(parsed.request);
  EXPECT_EQ(parsed.error, "max_tokens: Field required");
}

TEST(ParseMessagesRequest, CountTokensNeedsNoMaxTokensAndCostsItsInput) {
  const auto parsed =
      parse_messages_request(R"({"model":"m","messages":[{"role":"user","content":"12345678"}]})", true);
  ASSERT_TRUE(parsed.request) << parsed.error;
  EXPECT_EQ(parsed.request->max_tokens, 0);
  EXPECT_EQ(parsed.request->input_tokens, 2);
}

TEST(ParseMessagesRequest, RejectsBadBodies) {
  for (const char* bad :
       {"{", "[1]", R"({"max_tokens":1,"messages":[]})", R"({"model":1,"max_tokens":1,"messages":[]})",
        R"({"model":"m","max_tokens":1})", R"({"model":"m","max_tokens":1,"messages":"hi"})",
        R"({"model":"m","max_tokens":0,"messages":[]})", R"({"model":"m","max_tokens":"9","messages":[]})",
        R"({"model":"m","max_tokens":1,"messages":[],"stream":"yes"})"}) {
    const auto parsed = parse_messages_request(bad, false);
    EXPECT_FALSE(parsed.request) << bad;
    EXPECT_FALSE(parsed.error.empty()) << bad;
  }
}

}  // namespace messages_request_test
}  // namespace smartlb::sim
