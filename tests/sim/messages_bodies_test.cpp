#include "smartlb/sim/messages_bodies.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace messages_bodies_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;

MessageSpec sample() { return MessageSpec{"msg_1", "claude-sonnet", 20, 3}; }

TEST(MessageBody, HasAnthropicsShapeAndTheSimsText) {
  const auto body = json::parse(message_body(sample()));
  EXPECT_EQ(body, json::parse(R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet",
      "content":[{"type":"text","text":"This is a"}],"stop_reason":"end_turn","stop_sequence":null,
      "usage":{"input_tokens":20,"output_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}})"));
}

TEST(MessageStreamEvents, FollowAnthropicsSequenceOneDeltaPerPiece) {
  const auto events = message_stream_events(sample());
  std::vector<std::string> names;
  std::vector<json> data;
  for (const auto& event : events) {
    ASSERT_TRUE(event.data.starts_with("event: ")) << event.data;
    ASSERT_TRUE(event.data.ends_with("\n\n")) << event.data;
    const auto newline = event.data.find('\n');
    names.push_back(event.data.substr(7, newline - 7));
    ASSERT_EQ(event.data.substr(newline + 1, 6), "data: ") << event.data;
    data.push_back(json::parse(event.data.substr(newline + 7)));
    EXPECT_EQ(data.back()["type"], names.back());
    EXPECT_EQ(event.is_content, names.back() == "content_block_delta") << event.data;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta",
                                      "content_block_delta", "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"}));
  EXPECT_EQ(data[0]["message"], json::parse(R"({"id":"msg_1","type":"message","role":"assistant",
      "model":"claude-sonnet","content":[],"stop_reason":null,"stop_sequence":null,
      "usage":{"input_tokens":20,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}})"));
  EXPECT_EQ(
      data[1],
      json::parse(R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"));
  EXPECT_EQ(
      data[3],
      json::parse(R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"This"}})"));
  EXPECT_EQ(data[4]["delta"]["text"], " is");
  EXPECT_EQ(data[6], json::parse(R"({"type":"content_block_stop","index":0})"));
  EXPECT_EQ(data[7],
            json::parse(R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},
      "usage":{"output_tokens":3}})"));
}

TEST(CountTokensBody, IsInputTokens) { EXPECT_EQ(count_tokens_body(42), R"({"input_tokens":42})"); }

TEST(AnthropicErrorBody, HasTypeErrorAndTheErrorsTypeAndMessage) {
  EXPECT_EQ(anthropic_error_body("overloaded_error", "Overloaded"),
            R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
}

TEST(AnthropicErrorType, FollowsTheStatus) {
  EXPECT_EQ(anthropic_error_type(400), "invalid_request_error");
  EXPECT_EQ(anthropic_error_type(405), "invalid_request_error");
  EXPECT_EQ(anthropic_error_type(401), "authentication_error");
  EXPECT_EQ(anthropic_error_type(403), "permission_error");
  EXPECT_EQ(anthropic_error_type(404), "not_found_error");
  EXPECT_EQ(anthropic_error_type(413), "request_too_large");
  EXPECT_EQ(anthropic_error_type(429), "rate_limit_error");
  EXPECT_EQ(anthropic_error_type(500), "api_error");
  EXPECT_EQ(anthropic_error_type(503), "api_error");
  EXPECT_EQ(anthropic_error_type(529), "overloaded_error");
}

}  // namespace messages_bodies_test
}  // namespace smartlb::sim
