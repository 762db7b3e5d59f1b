#include "smartlb/sim/realtime_session.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace realtime_session_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;

std::vector<std::string> types(const RealtimeReply& reply) {
  std::vector<std::string> out;
  for (const auto& message : reply.messages) out.push_back(json::parse(message.text)["type"]);
  return out;
}

class RealtimeSessionTest : public ::testing::Test {
 protected:
  RealtimeSession session_{"gpt-rt", GenerationSettings{3, 16, {}}, 11, 1'700'000'000};
};

TEST_F(RealtimeSessionTest, OpensWithSessionCreated) {
  const json opening = json::parse(session_.opening().text);
  EXPECT_EQ(opening["type"], "session.created");
  EXPECT_TRUE(opening["event_id"].get<std::string>().starts_with("event_"));
  EXPECT_EQ(opening["session"]["model"], "gpt-rt");
  EXPECT_EQ(opening["session"]["type"], "realtime");
  EXPECT_TRUE(opening["session"]["id"].get<std::string>().starts_with("sess_"));
  EXPECT_EQ(opening["session"]["expires_at"], 1'700'000'000 + 1800);
}

TEST_F(RealtimeSessionTest, SessionUpdateAnswersTheWholeUpdatedSession) {
  const auto reply = session_.on_text(
      R"({"type":"session.update","session":{"type":"realtime","instructions":"be brief","model":"other"}})");
  ASSERT_EQ(types(reply), std::vector<std::string>{"session.updated"});
  const json session = json::parse(reply.messages[0].text)["session"];
  EXPECT_EQ(session["instructions"], "be brief");
  EXPECT_EQ(session["model"], "gpt-rt") << "the model is the session's";
  EXPECT_EQ(session["tool_choice"], "auto") << "fields not named stay";
}

TEST_F(RealtimeSessionTest, ItemCreateAnswersItemCreatedChainedToThePreviousItem) {
  const auto first = session_.on_text(
      R"({"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"0123456789abcdef"}]}})");
  ASSERT_EQ(types(first), std::vector<std::string>{"conversation.item.created"});
  const json created = json::parse(first.messages[0].text);
  EXPECT_TRUE(created["previous_item_id"].is_null());
  const std::string item_id = created["item"]["id"];
  EXPECT_TRUE(item_id.starts_with("item_"));
  EXPECT_EQ(created["item"]["content"][0]["text"], "0123456789abcdef");
  EXPECT_EQ(session_.context_tokens(), 4);

  const auto second = session_.on_text(
      R"({"type":"conversation.item.create","item":{"id":"mine","type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}})");
  const json next = json::parse(second.messages[0].text);
  EXPECT_EQ(next["previous_item_id"], item_id);
  EXPECT_EQ(next["item"]["id"], "mine") << "a client's item id is kept";
}

TEST_F(RealtimeSessionTest, ResponseCreateStreamsTextAndEndsWithUsage) {
  session_.on_text(
      R"({"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"0123456789abcdef"}]}})");
  const auto reply = session_.on_text(R"({"type":"response.create"})");
  const std::vector<std::string> expected{"response.created",
                                          "response.output_item.added",
                                          "response.content_part.added",
                                          "response.output_text.delta",
                                          "response.output_text.delta",
                                          "response.output_text.delta",
                                          "response.output_text.done",
                                          "response.content_part.done",
                                          "response.output_item.done",
                                          "response.done"};
  ASSERT_EQ(types(reply), expected);
  std::string text;
  for (const auto& message : reply.messages) {
    const json event = json::parse(message.text);
    EXPECT_EQ(message.is_content, event["type"] == "response.output_text.delta");
    if (message.is_content) text += event["delta"].get<std::string>();
  }
  EXPECT_EQ(text, generated_text(3));
  const json done = json::parse(reply.messages.back().text)["response"];
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["output"][0]["content"][0]["text"], text);
  EXPECT_EQ(done["usage"]["input_tokens"], 4);
  EXPECT_EQ(done["usage"]["output_tokens"], 3);
  EXPECT_EQ(done["usage"]["total_tokens"], 7);
  EXPECT_EQ(reply.tokens_served, 7);

  // The answer joins the conversation: the next response reads it too.
  const auto again = session_.on_text(R"({"type":"response.create","response":{"max_output_tokens":2}})");
  const json usage = json::parse(again.messages.back().text)["response"]["usage"];
  EXPECT_EQ(usage["input_tokens"], 7);
  EXPECT_EQ(usage["output_tokens"], 2);
}

TEST_F(RealtimeSessionTest, WhatItCannotAnswerIsAnErrorEvent) {
  for (const char* frame :
       {"not json", "[1]", R"({"no":"type"})", R"({"type":"input_audio_buffer.commit","event_id":"c1"})",
        R"({"type":"session.update"})", R"({"type":"conversation.item.create","item":3})"}) {
    const auto reply = session_.on_text(frame);
    ASSERT_EQ(types(reply), std::vector<std::string>{"error"}) << frame;
    const json error = json::parse(reply.messages[0].text)["error"];
    EXPECT_EQ(error["type"], "invalid_request_error") << frame;
    EXPECT_FALSE(error["message"].get<std::string>().empty());
  }
  const json named = json::parse(session_.on_text(R"({"type":"bogus","event_id":"c7"})").messages[0].text);
  EXPECT_EQ(named["error"]["event_id"], "c7") << "the error names the client's event";
  EXPECT_EQ(types(session_.on_binary()), std::vector<std::string>{"error"});
}

}  // namespace realtime_session_test
}  // namespace smartlb::sim
