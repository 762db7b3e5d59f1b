#include "smartlb/sim/response_objects.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace response_objects_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::ordered_json;

StoredResponse sample(ResponseStatus status = ResponseStatus::Completed) {
  StoredResponse response;
  response.id = "resp_1";
  response.model = "gpt-4o";
  response.created_at = 1'700'000'000;
  response.status = status;
  response.previous_response_id = "resp_0";
  response.metadata = {{"k", "v"}};
  response.message_id = "msg_9";
  response.output_tokens = 3;
  response.input_tokens = 20;
  return response;
}

struct ParsedEvent {
  std::string name;
  ordered_json data;
  bool is_content;
};

std::vector<ParsedEvent> parse(const std::vector<StreamEvent>& events) {
  std::vector<ParsedEvent> out;
  for (const auto& event : events) {
    const auto& text = event.data;
    EXPECT_TRUE(text.starts_with("event: ")) << text;
    EXPECT_TRUE(text.ends_with("\n\n")) << text;
    const auto newline = text.find('\n');
    const std::string name = text.substr(7, newline - 7);
    EXPECT_EQ(text.substr(newline + 1, 6), "data: ") << text;
    out.push_back({name, ordered_json::parse(text.substr(newline + 7)), event.is_content});
  }
  return out;
}

TEST(ResponseObject, CompletedHasItsTextAndUsage) {
  const auto object = response_object(sample());
  EXPECT_EQ(object["id"], "resp_1");
  EXPECT_EQ(object["object"], "response");
  EXPECT_EQ(object["status"], "completed");
  EXPECT_EQ(object["model"], "gpt-4o");
  EXPECT_EQ(object["previous_response_id"], "resp_0");
  EXPECT_EQ(object["metadata"], (ordered_json{{"k", "v"}}));
  ASSERT_EQ(object["output"].size(), 1u);
  const auto& message = object["output"][0];
  EXPECT_EQ(message["id"], "msg_9");
  EXPECT_EQ(message["type"], "message");
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"][0]["type"], "output_text");
  EXPECT_EQ(message["content"][0]["text"], generated_text(3));
  EXPECT_EQ(object["usage"]["input_tokens"], 20);
  EXPECT_EQ(object["usage"]["output_tokens"], 3);
  EXPECT_EQ(object["usage"]["total_tokens"], 23);
}

TEST(ResponseObject, NotYetCompletedHasNoOutputNorUsage) {
  for (const auto status : {ResponseStatus::Queued, ResponseStatus::InProgress, ResponseStatus::Cancelled}) {
    const auto object = response_object(sample(status));
    EXPECT_EQ(object["status"], response_status_name(status));
    EXPECT_TRUE(object["output"].empty());
    EXPECT_TRUE(object["usage"].is_null());
  }
}

TEST(ResponseStreamEvents, TheOrderAndShapeOfOpenAIsStream) {
  const auto events = parse(response_stream_events(sample()));
  const std::vector<std::string> expected{"response.created",           "response.in_progress",
                                          "response.output_item.added", "response.content_part.added",
                                          "response.output_text.delta", "response.output_text.delta",
                                          "response.output_text.delta", "response.output_text.done",
                                          "response.content_part.done", "response.output_item.done",
                                          "response.completed"};
  ASSERT_EQ(events.size(), expected.size());
  std::string text;
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].name, expected[i]);
    EXPECT_EQ(events[i].data["type"], expected[i]) << "event: and type agree";
    EXPECT_EQ(events[i].data["sequence_number"], static_cast<int>(i));
    EXPECT_EQ(events[i].is_content, expected[i] == "response.output_text.delta");
    if (events[i].name == "response.output_text.delta") {
      EXPECT_EQ(events[i].data["item_id"], "msg_9");
      EXPECT_EQ(events[i].data["output_index"], 0);
      EXPECT_EQ(events[i].data["content_index"], 0);
      text += events[i].data["delta"].get<std::string>();
    }
  }
  EXPECT_EQ(events[0].data["response"]["status"], "in_progress");
  EXPECT_TRUE(events[0].data["response"]["output"].empty());
  EXPECT_TRUE(events[0].data["response"]["usage"].is_null());
  EXPECT_EQ(events[2].data["item"]["status"], "in_progress");
  EXPECT_EQ(events[3].data["part"]["text"], "");
  EXPECT_EQ(text, generated_text(3));
  EXPECT_EQ(events[7].data["text"], text);
  EXPECT_EQ(events[8].data["part"]["text"], text);
  EXPECT_EQ(events[9].data["item"]["content"][0]["text"], text);
  EXPECT_EQ(events.back().data["response"], response_object(sample()))
      << "completed carries the whole response";
}

TEST(ResponseStreamEvents, StartingAfterLeavesOutTheEventsAlreadySeen) {
  const auto events = parse(response_stream_events(sample(), 7));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data["sequence_number"], 8);
  EXPECT_EQ(events.back().name, "response.completed");
}

}  // namespace response_objects_test
}  // namespace smartlb::sim
