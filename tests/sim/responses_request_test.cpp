#include "smartlb/sim/responses_request.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace responses_request_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::ordered_json;

ResponsesCreate parsed_ok(std::string_view body) {
  auto parsed = parse_responses_create(body);
  EXPECT_TRUE(parsed.request) << body << ": " << parsed.error.message;
  return parsed.request.value_or(ResponsesCreate{});
}

void expect_error(std::string_view body, std::optional<std::string> param, std::optional<std::string> code) {
  const auto parsed = parse_responses_create(body);
  ASSERT_FALSE(parsed.request) << body;
  EXPECT_EQ(parsed.error.param, param) << body;
  EXPECT_EQ(parsed.error.code, code) << body;
  EXPECT_FALSE(parsed.error.message.empty());
}

TEST(ParseResponsesCreate, StringInputIsOneUserMessage) {
  const auto request = parsed_ok(R"({"model":"gpt-4o","input":"0123456789abcdef"})");
  EXPECT_EQ(request.model, "gpt-4o");
  EXPECT_EQ(request.input_items, ordered_json::parse(R"([{"type":"message","role":"user",
      "content":[{"type":"input_text","text":"0123456789abcdef"}]}])"));
  EXPECT_EQ(request.prompt_tokens, 4);
  EXPECT_FALSE(request.previous_response_id);
  EXPECT_FALSE(request.stream);
  EXPECT_FALSE(request.background);
  EXPECT_TRUE(request.store) << "store defaults to true";
  EXPECT_TRUE(request.instructions.is_null());
  EXPECT_EQ(request.metadata, ordered_json::object());
}

TEST(ParseResponsesCreate, ArrayInputKeepsItemsAndNormalisesStringContent) {
  const auto request = parsed_ok(R"({"model":"m","input":[
      {"role":"system","content":"be brief"},
      {"role":"assistant","content":"earlier answer"},
      {"type":"message","role":"user","content":[{"type":"input_text","text":"abcd"}]},
      {"type":"function_call_output","call_id":"c1","output":"12345678"}],
      "instructions":"12345678"})");
  ASSERT_EQ(request.input_items.size(), 4u);
  EXPECT_EQ(request.input_items[0]["content"][0]["type"], "input_text");
  EXPECT_EQ(request.input_items[1]["content"][0]["type"], "output_text");
  EXPECT_EQ(request.input_items[2]["content"][0]["text"], "abcd");
  EXPECT_EQ(request.input_items[3]["type"], "function_call_output");
  // 8 + 14 + 4 + 8 bytes of input and 8 of instructions.
  EXPECT_EQ(request.prompt_tokens, 42 / 4);
  EXPECT_EQ(request.instructions, "12345678");
}

TEST(ParseResponsesCreate, ReadsChainStreamingAndOptions) {
  const auto request = parsed_ok(R"({"model":"m","input":"x","previous_response_id":"resp_1","stream":true,
      "background":false,"store":true,"max_output_tokens":7,"temperature":0.5,"top_p":0.25,
      "metadata":{"id":"user-data"}})");
  EXPECT_EQ(request.previous_response_id, "resp_1");
  EXPECT_TRUE(request.stream);
  EXPECT_EQ(request.max_output_tokens, 7);
  EXPECT_DOUBLE_EQ(request.temperature, 0.5);
  EXPECT_DOUBLE_EQ(request.top_p, 0.25);
  EXPECT_EQ(request.metadata["id"], "user-data");
  EXPECT_FALSE(parsed_ok(R"({"model":"m","previous_response_id":null})").previous_response_id);
}

TEST(ParseResponsesCreate, RefusesWhatOpenAIRefuses) {
  expect_error("not json", std::nullopt, std::nullopt);
  expect_error("[]", std::nullopt, std::nullopt);
  expect_error(R"({"input":"x"})", "model", "missing_required_parameter");
  expect_error(R"({"model":3})", "model", "invalid_type");
  expect_error(R"({"model":"m","stream":"yes"})", "stream", "invalid_type");
  expect_error(R"({"model":"m","background":true,"store":false})", "background", "invalid_value");
  expect_error(R"({"model":"m","max_output_tokens":0})", "max_output_tokens", "integer_below_min_value");
  expect_error(R"({"model":"m","max_output_tokens":1.5})", "max_output_tokens", "invalid_type");
  expect_error(R"({"model":"m","previous_response_id":5})", "previous_response_id", "invalid_type");
  expect_error(R"({"model":"m","metadata":[]})", "metadata", "invalid_type");
  expect_error(R"({"model":"m","input":5})", "input", "invalid_type");
  expect_error(R"({"model":"m","input":["x"]})", "input[0]", "invalid_type");
  expect_error(R"({"model":"m","input":[{"role":"user"}]})", "input[0].content",
               "missing_required_parameter");
}

}  // namespace responses_request_test
}  // namespace smartlb::sim
