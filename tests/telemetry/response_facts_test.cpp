#include "smartlb/telemetry/response_facts.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb {
namespace response_facts_test {  // named, not anonymous: tests/CMakeLists.txt

using Reasons = std::vector<std::string>;

telemetry::ResponseFacts read(std::string_view json) {
  telemetry::ResponseFacts f;
  read_response_facts(json, f);
  return f;
}

TEST(ResponseFacts, AChatCompletionsIdModelAndEachChoicesFinishReason) {
  const telemetry::ResponseFacts f = read(
      R"({"id":"chatcmpl-9","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[)"
      R"({"index":0,"message":{"role":"assistant","content":"hi","finish_reason":"nested"},"finish_reason":"stop"},)"
      R"({"index":1,"message":{"content":"x"},"finish_reason":"length"},{"index":2,"finish_reason":null}],)"
      R"("usage":{"prompt_tokens":1,"completion_tokens":2,"id":"not-this","model":"nor-this"}})");
  EXPECT_EQ(f.id, "chatcmpl-9");
  EXPECT_EQ(f.model, "gpt-4o-2024-08-06");
  EXPECT_EQ(f.finish_reasons, (Reasons{"stop", "length"}));
}

TEST(ResponseFacts, TheResponsesApisIdAndModelAtTheTopOrInItsResponseObject) {
  EXPECT_EQ(read(R"({"id":"resp_1","object":"response","model":"gpt-4o","status":"completed"})").id,
            "resp_1");
  const telemetry::ResponseFacts f = read(
      R"({"type":"response.completed","response":{"id":"resp_2","model":"gpt-4.1","output":[{"id":"msg_1"}]}})");
  EXPECT_EQ(f.id, "resp_2");
  EXPECT_EQ(f.model, "gpt-4.1");
  EXPECT_TRUE(f.finish_reasons.empty());
}

TEST(ResponseFacts, OnlyTheRightShapesCount) {
  // `response` that is no object, `choices` that is no array, members that are no strings.
  const telemetry::ResponseFacts f = read(
      R"({"response":"x","choices":{"a":{"finish_reason":"stop"}},"id":7,"model":null,"x":{"id":"deep"}})");
  EXPECT_TRUE(f.id.empty());
  EXPECT_TRUE(f.model.empty());
  EXPECT_TRUE(f.finish_reasons.empty());
  // An array that is the document: no top-level members at all.
  EXPECT_TRUE(read(R"([{"id":"a","model":"b"}])").id.empty());
}

TEST(ResponseFacts, KnownIdAndModelAreKeptAndEmptyOnesDoNotCount) {
  telemetry::ResponseFacts f;
  // Azure's first chunk: the prompt's filter results, id and model empty.
  read_response_facts(R"({"choices":[],"created":0,"id":"","model":"","prompt_filter_results":[]})", f);
  EXPECT_TRUE(f.id.empty());
  read_response_facts(
      R"({"id":"chatcmpl-1","model":"gpt-4o","choices":[{"delta":{"content":"a"},"finish_reason":null}]})",
      f);
  read_response_facts(
      R"({"id":"chatcmpl-2","model":"other","choices":[{"delta":{},"finish_reason":"stop"}]})", f);
  EXPECT_EQ(f.id, "chatcmpl-1");
  EXPECT_EQ(f.model, "gpt-4o");
  EXPECT_EQ(f.finish_reasons, Reasons{"stop"});
}

TEST(ResponseFacts, InvalidJsonAddsNothing) {
  const telemetry::ResponseFacts f =
      read(R"({"id":"chatcmpl-1","model":"gpt-4o","choices":[{"finish_reason":"stop"}])");
  EXPECT_TRUE(f.id.empty());
  EXPECT_TRUE(f.model.empty());
  EXPECT_TRUE(f.finish_reasons.empty());
}

TEST(ResponseFacts, EscapesAreDecodedAndLongTextOrTooManyReasonsAreNotKept) {
  EXPECT_EQ(read(R"({"model":"gpt\u002d4o","id":"a\"b"})").model, "gpt-4o");
  EXPECT_EQ(read(R"({"model":"gpt\u002d4o","id":"a\"b"})").id, "a\"b");
  EXPECT_EQ(read(R"({"mod\u0065l":"m","choices":[{"finish\u005freason":"stop"}]})").model,
            "m");  // escaped keys
  EXPECT_EQ(read(R"({"choices":[{"finish\u005freason":"stop"}]})").finish_reasons, Reasons{"stop"});
  const std::string longest(telemetry::ResponseFacts::kMaxText, 'm');
  EXPECT_EQ(read(R"({"model":")" + longest + R"("})").model, longest);
  EXPECT_TRUE(read(R"({"model":")" + longest + R"(m"})").model.empty());
  EXPECT_TRUE(read(R"({"model":")" + longest + R"(\u0041"})").model.empty());
  std::string many = R"({"choices":[)";
  for (int i = 0; i < 20; ++i)
    many += std::string(i ? "," : "") + R"({"finish_reason":"r)" + std::to_string(i) + R"("})";
  many += "]}";
  const telemetry::ResponseFacts f = read(many);
  ASSERT_EQ(f.finish_reasons.size(), telemetry::ResponseFacts::kMaxFinishReasons);
  EXPECT_EQ(f.finish_reasons.back(), "r15");
}

// Through the sniffer: only when asked, from a JSON body (whole or in pieces) or every event.
TEST(ResponseFacts, TheSnifferReadsThemOnlyWhenAsked) {
  const std::string body =
      R"({"id":"chatcmpl-1","model":"gpt-4o","choices":[{"finish_reason":"stop"}],"usage":{"prompt_tokens":3}})";
  telemetry::ResponseFacts whole, pieces, unasked;
  {
    telemetry::UsageSniffer s(telemetry::UsageSniffer::Mode::Json);
    s.read_facts_into(&whole);
    EXPECT_EQ(s.finish_with(body.data(), body.size()).prompt_tokens, 3);
  }
  {
    telemetry::UsageSniffer s(telemetry::UsageSniffer::Mode::Json);
    s.read_facts_into(&pieces);
    s.feed(body.substr(0, 10));
    EXPECT_EQ(s.finish_with(body.data() + 10, body.size() - 10).prompt_tokens, 3);
  }
  {
    telemetry::UsageSniffer s(telemetry::UsageSniffer::Mode::Json);
    s.feed(body);
    s.finish();
  }
  EXPECT_EQ(whole.id, "chatcmpl-1");
  EXPECT_EQ(pieces.model, "gpt-4o");
  EXPECT_EQ(pieces.finish_reasons, Reasons{"stop"});
  EXPECT_TRUE(unasked.id.empty());
}

TEST(ResponseFacts, TheSnifferReadsEveryEventOfAStream) {
  const std::string stream =
      "data: {\"id\":\"\",\"model\":\"\",\"choices\":[],\"prompt_filter_results\":[]}\n\n"
      "data: {\"id\":\"chatcmpl-7\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"delta\":{\"content\":\"Hi\"},"
      "\"finish_reason\":null}],\"usage\":null}\n\n"
      "data: "
      "{\"id\":\"chatcmpl-7\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"delta\":{},\"finish_reason\":"
      "\"stop\"}],"
      "\"usage\":null}\n\n"
      "data: "
      "{\"id\":\"chatcmpl-7\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1}}\n\n"
      "data: [DONE]\n\n";
  telemetry::ResponseFacts f;
  telemetry::UsageSniffer s(telemetry::UsageSniffer::Mode::EventStream);
  s.read_facts_into(&f);
  for (std::size_t i = 0; i < stream.size(); i += 7) s.feed(stream.substr(i, 7));
  EXPECT_EQ(s.finish().completion_tokens, 1);
  EXPECT_EQ(f.id, "chatcmpl-7");
  EXPECT_EQ(f.model, "gpt-4o-mini");
  EXPECT_EQ(f.finish_reasons, Reasons{"stop"});
}

}  // namespace response_facts_test
}  // namespace smartlb
