#include "smartlb/telemetry/usage_sniffer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb {
namespace usage_sniffer_test {  // named, not anonymous: tests/CMakeLists.txt

using Mode = telemetry::UsageSniffer::Mode;

const std::string kChatJson =
    R"({"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],)"
    R"("usage":{"prompt_tokens":17,"completion_tokens":5,"total_tokens":22}})";

// An OpenAI stream with stream_options.include_usage: "usage":null on every chunk, the
// usage in the last chunk before [DONE].
const std::string kStream =
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}],\"usage\":null}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"}}],\"usage\":null}\n\n"
    ": keep-alive comment\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\" world\"}}],\"usage\":null}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n"
    "data: [DONE]\n\n";

telemetry::TokenUsage sniff(Mode mode, const std::string& body, std::size_t piece) {
  telemetry::UsageSniffer s(mode);
  for (std::size_t i = 0; i < body.size(); i += piece) s.feed(body.substr(i, piece));
  return s.finish();
}

TEST(UsageSnifferMode, ChosenByContentType) {
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("application/json"), Mode::Json);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("Application/JSON; charset=utf-8"), Mode::Json);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("text/event-stream"), Mode::EventStream);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for(" text/event-stream ; charset=utf-8"), Mode::EventStream);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("text/plain"), Mode::Off);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for(""), Mode::Off);
}

TEST(UsageSnifferMode, CompressedBodyIsNotSniffed) {
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("application/json", "gzip"), Mode::Off);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("text/event-stream", "br"), Mode::Off);
  EXPECT_EQ(telemetry::UsageSniffer::mode_for("application/json", "identity"), Mode::Json);
}

TEST(UsageSnifferJson, ReadsUsageWhateverTheChunking) {
  for (std::size_t piece = 1; piece <= kChatJson.size(); ++piece) {
    const telemetry::TokenUsage u = sniff(Mode::Json, kChatJson, piece);
    ASSERT_EQ(u.prompt_tokens, 17) << "piece " << piece;
    ASSERT_EQ(u.completion_tokens, 5) << "piece " << piece;
  }
}

TEST(UsageSnifferJson, FinishWithTheLastPieceReadsTheSameAsFeedThenFinish) {
  for (std::size_t split : {std::size_t{0}, std::size_t{1}, kChatJson.size() / 2, kChatJson.size()}) {
    telemetry::UsageSniffer s(Mode::Json);
    s.feed(kChatJson.substr(0, split));
    const std::string rest = kChatJson.substr(split);
    const telemetry::TokenUsage u = s.finish_with(rest.data(), rest.size());
    EXPECT_EQ(u.prompt_tokens, 17) << split;
    EXPECT_EQ(u.completion_tokens, 5) << split;
  }
  telemetry::UsageSniffer stream(Mode::EventStream);
  const telemetry::TokenUsage su = stream.finish_with(kStream.data(), kStream.size());
  EXPECT_EQ(su.prompt_tokens, 9);
  telemetry::UsageSniffer over(Mode::Json, 10);
  EXPECT_FALSE(over.finish_with(kChatJson.data(), kChatJson.size()).known());  // over the limit
}

TEST(UsageJsonScan, EscapedQuotesAndBackslashesInStringsAreSkipped) {
  const std::string body =
      R"({"content":"say \"usage\": {\"prompt_tokens\": 99} \\","x":"\\\\","usage":{"prompt_tokens":3,"completion_tokens":4}})";
  const telemetry::TokenUsage u = telemetry::parse_usage_json(body);
  EXPECT_EQ(u.prompt_tokens, 3);
  EXPECT_EQ(u.completion_tokens, 4);
}

TEST(UsageSnifferJson, EmbeddingsHaveNoCompletionTokens) {
  const telemetry::TokenUsage u =
      sniff(Mode::Json, R"({"data":[],"usage":{"prompt_tokens":8,"total_tokens":8}})", 7);
  EXPECT_EQ(u.prompt_tokens, 8);
  EXPECT_EQ(u.completion_tokens, -1);
  EXPECT_TRUE(u.known());
}

TEST(UsageSnifferJson, ResponsesApiInputOutputTokens) {
  const telemetry::TokenUsage u =
      sniff(Mode::Json, R"({"object":"response","usage":{"input_tokens":3,"output_tokens":4}})", 5);
  EXPECT_EQ(u.prompt_tokens, 3);
  EXPECT_EQ(u.completion_tokens, 4);
}

TEST(UsageSnifferJson, NoUsageOrBadJsonIsUnknown) {
  EXPECT_FALSE(sniff(Mode::Json, R"({"error":{"code":"400"}})", 4).known());
  EXPECT_FALSE(sniff(Mode::Json, R"({"usage":{"prompt_tokens":1)", 4).known());
  EXPECT_FALSE(sniff(Mode::Json, R"({"usage":null})", 4).known());
  EXPECT_FALSE(sniff(Mode::Json, R"({"usage":{"prompt_tokens":"7"}})", 4).known());
  EXPECT_FALSE(sniff(Mode::Json, "", 4).known());
}

TEST(UsageSnifferJson, BodyOverTheLimitIsDroppedNotBuffered) {
  telemetry::UsageSniffer s(Mode::Json, 100);
  s.feed(R"({"usage":{"prompt_tokens":1,"completion_tokens":2},"pad":")");
  s.feed(std::string(60, 'x'));
  EXPECT_EQ(s.buffered_bytes(), 0u) << "the buffer is released once the limit is crossed";
  s.feed("\"}");
  EXPECT_FALSE(s.finish().known());
}

TEST(UsageSnifferJson, BodyExactlyAtTheLimitIsParsed) {
  const std::string body = R"({"usage":{"prompt_tokens":1,"completion_tokens":2}})";
  telemetry::UsageSniffer s(Mode::Json, body.size());
  s.feed(body);
  EXPECT_EQ(s.finish().completion_tokens, 2);
}

TEST(UsageSnifferStream, ReadsUsageFromTheLastEventWhateverTheChunking) {
  for (std::size_t piece = 1; piece <= kStream.size(); ++piece) {
    const telemetry::TokenUsage u = sniff(Mode::EventStream, kStream, piece);
    ASSERT_EQ(u.prompt_tokens, 9) << "piece " << piece;
    ASSERT_EQ(u.completion_tokens, 2) << "piece " << piece;
  }
}

TEST(UsageSnifferStream, CrLfAndCrLineEndingsSplitAnywhere) {
  std::string crlf, cr;
  for (char c : kStream) {
    if (c == '\n') {
      crlf += "\r\n";
      cr += '\r';
    } else {
      crlf += c;
      cr += c;
    }
  }
  for (std::size_t piece = 1; piece <= 7; ++piece) {
    EXPECT_EQ(sniff(Mode::EventStream, crlf, piece).prompt_tokens, 9) << "crlf piece " << piece;
    EXPECT_EQ(sniff(Mode::EventStream, cr, piece).prompt_tokens, 9) << "cr piece " << piece;
  }
}

TEST(UsageSnifferStream, StreamWithoutUsageIsUnknown) {
  const std::string s =
      "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{}}],\"usage\":null}\n\n"
      "data: [DONE]\n\n";
  EXPECT_FALSE(sniff(Mode::EventStream, s, 3).known());
}

TEST(UsageSnifferStream, MultiLineDataAndNoSpaceAfterColon) {
  const std::string s =
      "event: message\n"
      "data:{\"choices\":[],\n"
      "data: \"usage\":{\"prompt_tokens\":4,\"completion_tokens\":6}}\n"
      "id: 7\n"
      "\n"
      "data:[DONE]\n\n";
  const telemetry::TokenUsage u = sniff(Mode::EventStream, s, 2);
  EXPECT_EQ(u.prompt_tokens, 4);
  EXPECT_EQ(u.completion_tokens, 6);
}

TEST(UsageSnifferStream, LastEventWithoutBlankLineCounts) {
  const std::string s = "data: {\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n";
  EXPECT_EQ(sniff(Mode::EventStream, s, 5).completion_tokens, 1);
  const std::string t = "data: {\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":3}}";
  EXPECT_EQ(sniff(Mode::EventStream, t, 5).completion_tokens, 3);
}

TEST(UsageSnifferStream, ResponsesApiCompletedEvent) {
  const std::string s =
      "event: response.output_text.delta\ndata: "
      "{\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n"
      "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":"
      "{\"input_tokens\":12,\"output_tokens\":3}}}\n\n";
  const telemetry::TokenUsage u = sniff(Mode::EventStream, s, 11);
  EXPECT_EQ(u.prompt_tokens, 12);
  EXPECT_EQ(u.completion_tokens, 3);
}

TEST(UsageSnifferStream, MemoryStaysBoundedOnALongStream) {
  telemetry::UsageSniffer s(Mode::EventStream, telemetry::UsageSniffer::kDefaultJsonLimit, 4096);
  const std::string event =
      "data: {\"choices\":[{\"delta\":{\"content\":\"" + std::string(200, 'a') + "\"}}],\"usage\":null}\n\n";
  std::size_t most = 0;
  for (int i = 0; i < 50'000; ++i) {  // ~12 MB
    s.feed(event);
    most = std::max(most, s.buffered_bytes());
  }
  EXPECT_LE(most, 4096u);
  s.feed("data: {\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":50000}}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(s.finish().completion_tokens, 50000);
}

TEST(UsageSnifferStream, EventsThatComeWholeAreReadInPlaceAndOnlyASplitOneIsCopied) {
  telemetry::UsageSniffer s(Mode::EventStream);
  const std::string event =
      "data: {\"choices\":[{\"delta\":{\"content\":\"" + std::string(200, 'a') + "\"}}],\"usage\":null}\n\n";
  for (int i = 0; i < 3; ++i) s.feed(event);  // one event per read, as a stream's events come
  EXPECT_EQ(s.allocated_bytes(), 0u) << "a stream waiting for its next event keeps no copy of the last";
  const std::string usage = "data: {\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":9}}\n\n";
  s.feed(usage.substr(0, usage.size() - 1));  // its data line whole, its end in the next read
  EXPECT_GT(s.allocated_bytes(), 0u);
  s.feed(usage.substr(usage.size() - 1));
  const telemetry::TokenUsage u = s.finish();
  EXPECT_EQ(u.prompt_tokens, 7);
  EXPECT_EQ(u.completion_tokens, 9);
}

TEST(UsageSnifferStream, OversizedEventIsSkippedButLaterOnesAreRead) {
  telemetry::UsageSniffer s(Mode::EventStream, telemetry::UsageSniffer::kDefaultJsonLimit, 64);
  s.feed("data: {\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1},\"pad\":\"" + std::string(200, 'p') +
         "\"}\n\n");
  EXPECT_LE(s.buffered_bytes(), 64u);
  EXPECT_FALSE(telemetry::UsageSniffer(s).finish().known());
  s.feed("data: {\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}\n\n");
  EXPECT_EQ(s.finish().prompt_tokens, 5);
}

TEST(UsageSnifferOff, IgnoresEverything) {
  telemetry::UsageSniffer s(Mode::Off);
  s.feed(kChatJson);
  EXPECT_EQ(s.buffered_bytes(), 0u);
  EXPECT_FALSE(s.finish().known());
}

}  // namespace usage_sniffer_test
}  // namespace smartlb

namespace smartlb {
namespace usage_sniffer_test {

TEST(UsageJsonScan, OnlyTheTopLevelOrResponseUsageCounts) {
  // A "usage" key nested under another key, and the word inside strings (with escaped
  // quotes), must not be taken for the response's usage.
  const std::string body =
      R"({"choices":[{"message":{"content":"say \"usage\": {\"prompt_tokens\": 99}","tool":{"usage":{"prompt_tokens":77}}}}],)"
      R"("metadata":{"usage":{"prompt_tokens":55}},"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}})";
  const telemetry::TokenUsage u = telemetry::parse_usage_json(body);
  EXPECT_EQ(u.prompt_tokens, 12);
  EXPECT_EQ(u.completion_tokens, 34);
}

TEST(UsageJsonScan, ALastUsageThatIsNotTheTopLevelKeyFallsBackToTheFullScan) {
  // The quick path takes the last "usage"; here it is a string value, a nested key, or one
  // followed by more than the end of the top-level object.
  EXPECT_EQ(telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":5},"note":"usage"})").prompt_tokens, 5);
  EXPECT_EQ(
      telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":6},"x":[{"usage":{"prompt_tokens":9}}]})")
          .prompt_tokens,
      6);
  EXPECT_FALSE(telemetry::parse_usage_json(R"({"a":{"usage":{"prompt_tokens":1}}})").known());
  EXPECT_EQ(telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":7}} trailing)").prompt_tokens, 7);
  EXPECT_EQ(telemetry::parse_usage_json(" {\"id\":1, \"usage\" : {\"prompt_tokens\":8}\n}\n").prompt_tokens,
            8);
}

TEST(UsageJsonScan, NestedUsageAloneIsUnknown) {
  const telemetry::TokenUsage u =
      telemetry::parse_usage_json(R"({"metadata":{"usage":{"prompt_tokens":55}},"usage":null})");
  EXPECT_FALSE(u.known());
}

TEST(UsageJsonScan, ResponsesApiUsageUnderResponse) {
  const telemetry::TokenUsage u = telemetry::parse_usage_json(
      R"({"type":"response.completed","response":{"id":"r","output":[{"x":{"usage":{"input_tokens":1}}}],"usage":{"input_tokens":7,"output_tokens":8}}})");
  EXPECT_EQ(u.prompt_tokens, 7);
  EXPECT_EQ(u.completion_tokens, 8);
}

}  // namespace usage_sniffer_test
}  // namespace smartlb

namespace smartlb {
namespace usage_sniffer_test {

TEST(UsageJsonScan, FieldsAreReadFromTheUsageObjectItselfNotItsDetails) {
  const telemetry::TokenUsage u = telemetry::parse_usage_json(
      R"({"usage":{"prompt_tokens_details":{"prompt_tokens":999,"cached_tokens":3},"completion_tokens" : 21 ,)"
      R"("prompt_tokens":13,"total_tokens":34}})");
  EXPECT_EQ(u.prompt_tokens, 13);
  EXPECT_EQ(u.completion_tokens, 21);
}

TEST(UsageJsonScan, NullNegativeOrNonIntegerCountsAreUnknown) {
  const telemetry::TokenUsage u =
      telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":null,"completion_tokens":-2}})");
  EXPECT_EQ(u.prompt_tokens, -1);
  EXPECT_EQ(u.completion_tokens, -1);
  const telemetry::TokenUsage f =
      telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":1.5,"completion_tokens":"7"}})");
  EXPECT_EQ(f.prompt_tokens, -1);
  EXPECT_EQ(f.completion_tokens, -1);
}

// Each count is read from the first member of its name; when chat's name has no usable count
// the Responses API's name is read, in the fast path and in the full scan alike.
TEST(UsageJsonScan, TheFirstMemberOfANameCountsAndAnUnusableOneFallsBackToTheOtherName) {
  for (const std::string_view tail : {"}", R"(,"x":{"usage":1}})"}) {  // the second takes the full scan
    const std::string json = std::string(R"({"usage":{"prompt_tokens":4,"prompt_tokens":9,)") +
                             R"("completion_tokens":null,"output_tokens":"x\"\\","output_tokens":6,)" +
                             R"("input_tokens":5,"completion_tokens":8})" + std::string(tail);
    const telemetry::TokenUsage u = telemetry::parse_usage_json(json);
    EXPECT_EQ(u.prompt_tokens, 4) << json;
    EXPECT_EQ(u.completion_tokens, -1) << json;  // null, then a string: both names unusable
  }
  const telemetry::TokenUsage r =
      telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":null,"input_tokens":12,"output_tokens":3}})");
  EXPECT_EQ(r.prompt_tokens, 12);
  EXPECT_EQ(r.completion_tokens, 3);
  // A string value that spells a count's name is not a key.
  const telemetry::TokenUsage v =
      telemetry::parse_usage_json(R"({"usage":{"note":"prompt_tokens","prompt_tokens":2}})");
  EXPECT_EQ(v.prompt_tokens, 2);
}

}  // namespace usage_sniffer_test
}  // namespace smartlb

namespace smartlb {
namespace usage_sniffer_test {

// Prompt caching: the cached part of the prompt is a detail of the prompt count.
TEST(UsageJsonScan, ChatCachedTokensFromPromptTokensDetails) {
  const telemetry::TokenUsage u = telemetry::parse_usage_json(
      R"({"id":"chatcmpl-9","usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,)"
      R"("prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},)"
      R"("completion_tokens_details":{"reasoning_tokens":0,"cached_tokens":77}}})");
  EXPECT_EQ(u.prompt_tokens, 2006);
  EXPECT_EQ(u.completion_tokens, 300);
  EXPECT_EQ(u.cached_tokens, 1920);
}

TEST(UsageJsonScan, ResponsesCachedTokensFromInputTokensDetails) {
  const telemetry::TokenUsage u = telemetry::parse_usage_json(
      R"({"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":1500,)"
      R"("input_tokens_details":{"cached_tokens":1024},"output_tokens":40,)"
      R"("output_tokens_details":{"reasoning_tokens":0},"total_tokens":1540}}})");
  EXPECT_EQ(u.prompt_tokens, 1500);
  EXPECT_EQ(u.completion_tokens, 40);
  EXPECT_EQ(u.cached_tokens, 1024);
}

TEST(UsageJsonScan, CachedTokensUnknownWithoutDetails) {
  EXPECT_EQ(telemetry::parse_usage_json(kChatJson).cached_tokens, -1);
  EXPECT_EQ(telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":5,"prompt_tokens_details":null}})")
                .cached_tokens,
            -1);
  // A cached_tokens of the usage object itself, or of another detail, is not the prompt's.
  EXPECT_EQ(telemetry::parse_usage_json(R"({"usage":{"prompt_tokens":5,"cached_tokens":4,)"
                                        R"("completion_tokens_details":{"cached_tokens":3}}})")
                .cached_tokens,
            -1);
}

TEST(UsageSnifferEventStream, CachedTokensFromTheLastChunk) {
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":8,\"total_tokens\":1208,"
      "\"prompt_tokens_details\":{\"cached_tokens\":1152}}}\n\n"
      "data: [DONE]\n\n";
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, stream.size()}) {
    const telemetry::TokenUsage u = sniff(Mode::EventStream, stream, piece);
    EXPECT_EQ(u.prompt_tokens, 1200) << "piece " << piece;
    EXPECT_EQ(u.cached_tokens, 1152) << "piece " << piece;
  }
}

// Claude's Messages API: the cache's tokens are apart from input_tokens; the prompt is all of
// them, the cache's reads its cached part.
TEST(UsageJsonScan, AnthropicUsageCountsTheCacheInThePrompt) {
  const telemetry::TokenUsage u = telemetry::parse_usage_json(
      R"({"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":12,)"
      R"("cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":5}})");
  EXPECT_EQ(u.prompt_tokens, 1012);
  EXPECT_EQ(u.cached_tokens, 900);
  EXPECT_EQ(u.completion_tokens, 5);
  const telemetry::TokenUsage plain =
      telemetry::parse_usage_json(R"({"usage":{"input_tokens":12,"output_tokens":5}})");
  EXPECT_EQ(plain.prompt_tokens, 12);
  EXPECT_EQ(plain.cached_tokens, -1);
}

// Its stream says the prompt's usage in message_start and the output's in message_delta.
TEST(UsageSnifferStream, AnthropicStreamJoinsMessageStartAndMessageDelta) {
  const std::string stream =
      "event: message_start\n"
      "data: "
      "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"content\":[],\"usage\":{\"input_tokens\":"
      "25,"
      "\"cache_read_input_tokens\":1000,\"cache_creation_input_tokens\":0,\"output_tokens\":1}}}\n\n"
      "event: content_block_start\n"
      "data: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
      "event: ping\ndata: {\"type\": \"ping\"}\n\n"
      "event: content_block_delta\n"
      "data: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
      "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
      "event: message_delta\n"
      "data: "
      "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}"
      "\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  for (const std::size_t piece : {stream.size(), std::size_t{7}, std::size_t{1}}) {
    const telemetry::TokenUsage u = sniff(Mode::EventStream, stream, piece);
    EXPECT_EQ(u.prompt_tokens, 1025) << piece;
    EXPECT_EQ(u.cached_tokens, 1000) << piece;
    EXPECT_EQ(u.completion_tokens, 15) << piece;
  }
}

}  // namespace usage_sniffer_test
}  // namespace smartlb
