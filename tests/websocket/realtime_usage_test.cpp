#include "smartlb/websocket/realtime_usage.hpp"

#include <gtest/gtest.h>

namespace smartlb::websocket {
namespace realtime_usage_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(RealtimeUsage, ResponseDoneGivesItsResponsesUsage) {
  const auto u = response_done_usage(
      R"({"type":"response.done","event_id":"e1","response":{"id":"r","usage":{"total_tokens":30,"input_tokens":12,"output_tokens":18}}})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 12);
  EXPECT_EQ(u->output_tokens, 18);
}

TEST(RealtimeUsage, OtherTextGivesNone) {
  EXPECT_FALSE(response_done_usage(R"({"type":"response.output_text.delta","delta":"response.done"})"));
  EXPECT_FALSE(response_done_usage(R"({"type":"response.created","note":"\"response.done\""})"));
  EXPECT_FALSE(response_done_usage(R"({"type":"response.done","response":{"id":"r"}})"));
  EXPECT_FALSE(response_done_usage(R"({"type":"response.done","response":{"usage":{"input_tokens":-1}}})"));
  EXPECT_FALSE(response_done_usage(R"({"type":"response.done")"));
  EXPECT_FALSE(response_done_usage(""));
}

TEST(RealtimeUsage, ResponseCompletedGivesItsResponsesUsage) {
  const auto u = response_completed_usage(
      R"({"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"output_tokens":9}}})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 5);
  EXPECT_EQ(u->output_tokens, 9);
  EXPECT_FALSE(response_completed_usage(
      R"({"type":"response.done","response":{"id":"r","usage":{"input_tokens":5,"output_tokens":9}}})"));
  EXPECT_FALSE(response_done_usage(
      R"({"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"output_tokens":9}}})"));
}

TEST(RealtimeUsage, ResponseCreatedIsTheTypeNotTheWords) {
  EXPECT_TRUE(is_response_created(R"({"event_id":"e2","type":"response.created","response":{"id":"r"}})"));
  EXPECT_FALSE(
      is_response_created(R"({"type":"response.output_text.delta","delta":"\"response.created\""})"));
  EXPECT_FALSE(is_response_created(R"({"type":"response.done","response":{"usage":{}}})"));
  EXPECT_FALSE(is_response_created(R"({"type":"response.created")"));
}

TEST(RealtimeUsage, AResponsesEndIsEveryEventThatEndsOneWhateverItCarries) {
  for (const char* text :
       {R"({"type":"response.done","response":{"usage":null}})", R"({"type":"response.completed"})",
        R"({"type":"response.failed","response":{"error":{"code":"server_error"}}})",
        R"({"type":"response.incomplete"})"})
    EXPECT_TRUE(is_response_end(text)) << text;
  for (const char* text : {R"({"type":"response.created"})", R"({"type":"response.output_text.done"})",
                           R"({"type":"error","message":"response.done"})", "not json"})
    EXPECT_FALSE(is_response_end(text)) << text;
}

TEST(RealtimeUsage, ALargeFramesEndIsReadFromItsFirstBytes) {
  EXPECT_TRUE(starts_as_response_end(R"({"type":"response.done","response":{"output":[{"con)"));
  EXPECT_TRUE(starts_as_response_end(R"( { "type" : "response.completed", "resp)"));
  EXPECT_FALSE(starts_as_response_end(R"({"event_id":"e1","type":"response.done")"))
      << "a type that does not come first is not guessed";
  EXPECT_FALSE(starts_as_response_end(R"({"type":"response.done_extra")"));
  EXPECT_FALSE(starts_as_response_end(R"({"type":"response.audio.delta","delta":"AAAA)"));
}

}  // namespace realtime_usage_test
}  // namespace smartlb::websocket
