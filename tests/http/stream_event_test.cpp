#include "smartlb/http/stream_event.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace stream_event_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::string_view_literals;

// The events' own judgement (tests/http/stream_start_test.cpp holds it in whole streams).

TEST(StreamEvent, ChatChunks) {
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"content":"Hi"}}]})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"role":"assistant"}}]})"),
            http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[],"prompt_filter_results":[{"prompt_index":0}]})"),
            http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{},"finish_reason":"stop"}]})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[],"usage":{"prompt_tokens":1}})"),
            http::StartReason::Content);
}

TEST(StreamEvent, PayloadsCountWhenNotEmpty) {
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"tool_calls":[]}}]})"),
            http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"tool_calls":[{}]}}]})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"audio":{"id":"a"}}}]})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"content":""}}]})"), http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"content":0}}]})"), http::StartReason::Content);
}

TEST(StreamEvent, ResponsesEvents) {
  EXPECT_EQ(http::judge_stream_event(R"({"type":"response.created","response":{}})"),
            http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"type":"response.output_text.delta","delta":"a"})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(R"({"type":"response.failed"})"), http::StartReason::ServerError);
  EXPECT_EQ(http::judge_stream_event(R"({"type":"error","code":"content_filter"})"),
            http::StartReason::ClientError);
}

TEST(StreamEvent, AnthropicMessagesEvents) {
  EXPECT_EQ(
      http::judge_stream_event(
          R"({"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":9}}})"),
      http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(
                R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"),
            http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"type": "ping"})"), http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(
                R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(
                R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(
                R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"),
            http::StartReason::ServerError)
      << "529's event: another backend may serve";
  EXPECT_EQ(http::judge_stream_event(
                R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})"),
            http::StartReason::ClientError);
}

TEST(StreamEvent, ErrorsAreClassified) {
  EXPECT_EQ(http::judge_stream_event(R"({"error":{"code":"server_error"}})"), http::StartReason::ServerError);
  EXPECT_EQ(http::judge_stream_event(R"({"error":{"code":"content_filter"}})"),
            http::StartReason::ClientError);
  EXPECT_EQ(http::judge_stream_event(R"({"error":null,"choices":[]})"), http::StartReason::None);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"error":1}}]})"), http::StartReason::Content);
}

TEST(StreamEvent, WhatIsNotAJsonObjectIsContent) {
  for (const std::string_view data : {"hello"sv, "[1]"sv, "\"s\""sv, "{\"choices\":[]"sv,
                                      "{\"choices\":[],\"n\":1e400}"sv, "{\"choices\":[]}\0"sv}) {
    SCOPED_TRACE(data);
    EXPECT_EQ(http::judge_stream_event(data), http::StartReason::Content);
  }
}

TEST(StreamEvent, LongEscapedNamesAreNoneOfTheNamesCompared) {
  // Past the buffer names are decoded into: still not `role`, so the delta holds a payload.
  const std::string long_name(40, 'x');
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"\u0078)" + long_name + R"(":"a"}}]})"),
            http::StartReason::Content);
  EXPECT_EQ(http::judge_stream_event(R"({"choices":[{"delta":{"r\u006fle":"assistant"}}]})"),
            http::StartReason::None);
}

}  // namespace stream_event_test
}  // namespace smartlb
