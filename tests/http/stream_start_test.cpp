#include "smartlb/http/stream_start.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb {
namespace {

constexpr std::size_t kLimit = 64 * 1024;

// Fed whole, in one call.
StreamStart judge(std::string_view body, std::size_t limit = kLimit) {
  StreamStart s(limit);
  s.advance(body);
  return s;
}

// Fed a byte at a time, as a growing prefix: the verdict after the last byte, and the number of
// bytes it took to reach it (body.size() + 1 when it never left Hold).
std::pair<StreamStart, std::size_t> judge_bytewise(std::string_view body, std::size_t limit = kLimit) {
  StreamStart s(limit);
  for (std::size_t n = 1; n <= body.size(); ++n)
    if (s.advance(body.substr(0, n)) != StartVerdict::Hold) return {s, n};
  return {s, body.size() + 1};
}

constexpr std::string_view kContent =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
constexpr std::string_view kServerError =
    "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,"
    "\"code\":null}}\n\n";
constexpr std::string_view kContentFilter =
    "data: "
    "{\"error\":{\"message\":\"filtered\",\"type\":null,\"param\":\"prompt\",\"code\":\"content_filter\","
    "\"status\":400}}\n\n";
// Azure's first event when content filtering is on: results for the prompt, no choices yet.
constexpr std::string_view kPromptFilterResults =
    "data: "
    "{\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\",\"prompt_filter_results\":"
    "[{\"prompt_index\":0,\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"}}}]}"
    "\n\n";

TEST(StreamStart, Empty_Holds) {
  StreamStart s(kLimit);
  EXPECT_EQ(s.advance(""), StartVerdict::Hold);
  EXPECT_EQ(s.reason(), StartReason::None);
}

TEST(StreamStart, ContentFirst_Releases) {
  const auto s = judge(kContent);
  EXPECT_EQ(s.verdict(), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::Content);
}

TEST(StreamStart, AzurePromptFilterResultsFirst_IsContentNotAnError) {
  const auto s = judge(kPromptFilterResults);
  EXPECT_EQ(s.verdict(), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::Content);
}

TEST(StreamStart, DoneFirst_Releases) {
  const auto s = judge("data: [DONE]\n\n");
  EXPECT_EQ(s.verdict(), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::Done);
}

TEST(StreamStart, ServerErrorDataFirst_FailsOver) {
  const auto s = judge(kServerError);
  EXPECT_EQ(s.verdict(), StartVerdict::FailOver);
  EXPECT_EQ(s.reason(), StartReason::ServerError);
}

TEST(StreamStart, ErrorAsAString_FailsOver) {
  EXPECT_EQ(judge("data: {\"error\":\"boom\"}\n\n").verdict(), StartVerdict::FailOver);
}

TEST(StreamStart, ErrorEventType_FailsOverWhateverItsData) {
  EXPECT_EQ(judge("event: error\ndata: upstream went away\n\n").verdict(), StartVerdict::FailOver);
  EXPECT_EQ(judge("event: error\ndata: {\"message\":\"x\"}\n\n").reason(), StartReason::ServerError);
}

TEST(StreamStart, ContentFilterErrorFirst_IsReleasedNotFailedOver) {
  const auto s = judge(kContentFilter);
  EXPECT_EQ(s.verdict(), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::ClientError);
  EXPECT_EQ(judge("event: error\ndata: {\"error\":{\"code\":\"content_filter\"}}\n\n").verdict(),
            StartVerdict::Release);
  EXPECT_EQ(
      judge("data: {\"error\":{\"code\":\"x\",\"innererror\":{\"code\":\"ResponsibleAIPolicyViolation\"}}}"
            "\n\n")
          .reason(),
      StartReason::ClientError);
}

TEST(StreamStart, InvalidRequestErrorFirst_IsReleased) {
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"invalid_request_error\",\"code\":null}}\n\n").reason(),
            StartReason::ClientError);
  EXPECT_EQ(judge("data: {\"error\":{\"code\":\"context_length_exceeded\"}}\n\n").reason(),
            StartReason::ClientError);
}

TEST(StreamStart, NullErrorMember_IsContent) {
  const auto s = judge("data: {\"error\":null,\"choices\":[]}\n\n");
  EXPECT_EQ(s.verdict(), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::Content);
}

TEST(StreamStart, NestedErrorKey_IsContent) {
  EXPECT_EQ(judge("data: {\"choices\":[{\"delta\":{\"error\":1}}]}\n\n").reason(), StartReason::Content);
}

TEST(StreamStart, ErrorAfterContent_IsNotLookedAt) {
  const std::string body = std::string(kContent) + std::string(kServerError);
  EXPECT_EQ(judge(body).reason(), StartReason::Content);
}

TEST(StreamStart, IncompleteEvent_Holds) {
  EXPECT_EQ(judge("data: {\"error\":{}}\n").verdict(), StartVerdict::Hold);  // no empty line yet
  EXPECT_EQ(judge("data: {\"choices\":[]}").verdict(), StartVerdict::Hold);
}

TEST(StreamStart, CommentsAndEventsWithoutData_AreSkipped) {
  const auto held = judge(": keep-alive\n\n: ping\nevent: error\n\n");
  EXPECT_EQ(held.verdict(), StartVerdict::Hold);  // an event without data is not dispatched
  const std::string body =
      std::string(": keep-alive\n\nevent: error\n\nid: 1\nretry: 10\n\n") + std::string(kServerError);
  EXPECT_EQ(judge(body).verdict(), StartVerdict::FailOver);  // the error type did not carry over
  const std::string body2 = std::string(": keep-alive\n\nevent: error\n\n") + std::string(kContent);
  EXPECT_EQ(judge(body2).reason(), StartReason::Content);
}

TEST(StreamStart, CrlfAndCrLineEndings) {
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"server_error\"}}\r\n\r\n").verdict(), StartVerdict::FailOver);
  // CR alone ends a line too, but a CR as the last byte may be half of a CRLF: the next byte
  // settles it.
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"server_error\"}}\r\r").verdict(), StartVerdict::Hold);
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"server_error\"}}\r\rd").verdict(), StartVerdict::FailOver);
  EXPECT_EQ(judge(": hi\r\ndata: [DONE]\r\n\r\n").reason(), StartReason::Done);
  // A CR at the end may be half of a CRLF: the line is complete, the empty one is not yet.
  EXPECT_EQ(judge("data: x\r\n\r").verdict(), StartVerdict::Hold);
}

TEST(StreamStart, MultiLineData_IsJoinedWithLf) {
  EXPECT_EQ(judge("data: {\"error\":\ndata: {\"type\":\"server_error\"}}\n\n").verdict(),
            StartVerdict::FailOver);
  EXPECT_EQ(judge("data: {\"error\":\r\ndata: {\"code\":\"content_filter\"}}\r\n\r\n").reason(),
            StartReason::ClientError);
  EXPECT_EQ(judge("event: error\ndata: {\"error\":\ndata: {\"code\":\"content_filter\"}}\n\n").reason(),
            StartReason::ClientError);
  EXPECT_EQ(judge("data: {\"choices\":\ndata: []}\n\n").reason(), StartReason::Content);
  // Only one data line of exactly [DONE] is the end marker.
  EXPECT_EQ(judge("data: [DONE]\ndata: x\n\n").reason(), StartReason::Content);
}

TEST(StreamStart, FieldSyntax_OneSpaceDroppedNoSpaceAllowed) {
  EXPECT_EQ(judge("data:{\"error\":{}}\n\n").verdict(), StartVerdict::FailOver);
  EXPECT_EQ(judge("event:error\ndata:x\n\n").verdict(), StartVerdict::FailOver);
  EXPECT_EQ(judge("event:  error\ndata: x\n\n").reason(), StartReason::Content);  // type " error"
  EXPECT_EQ(judge("data:[DONE]\n\n").reason(), StartReason::Done);
}

TEST(StreamStart, AFieldWithoutAColon_HasAnEmptyValue) {
  // `data` alone is a data line with an empty value: the data is "\n" + the next line's (still
  // JSON, with a leading blank).
  EXPECT_EQ(judge("data\ndata: {\"error\":{}}\n\n").reason(), StartReason::ServerError);
  EXPECT_EQ(judge("data\n\n").reason(), StartReason::Content);
  EXPECT_EQ(judge("event: error\ndata\ndata: {\"error\":\ndata: {\"code\":\"content_filter\"}}\n\n").reason(),
            StartReason::ClientError);
}

TEST(StreamStart, LimitWithoutACompleteEvent_Releases) {
  const std::string body = "data: " + std::string(100, 'x');
  StreamStart s(64);
  EXPECT_EQ(s.advance(std::string_view(body).substr(0, 63)), StartVerdict::Hold);
  EXPECT_EQ(s.advance(std::string_view(body).substr(0, 64)), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::Limit);
}

TEST(StreamStart, AnEventCompletingPastTheLimit_IsNotSeenHoweverItArrived) {
  const std::string body = "data: " + std::string(60, 'x') + "\n\n";  // 68 bytes
  EXPECT_EQ(judge(body, 64).reason(), StartReason::Limit);
  EXPECT_EQ(judge_bytewise(body, 64).first.reason(), StartReason::Limit);
  EXPECT_EQ(judge(body, 68).reason(), StartReason::Content);
}

TEST(StreamStart, DecisionIsFinal) {
  StreamStart s(kLimit);
  std::string body(kContent);
  EXPECT_EQ(s.advance(body), StartVerdict::Release);
  body += kServerError;
  EXPECT_EQ(s.advance(body), StartVerdict::Release);
  EXPECT_EQ(s.reason(), StartReason::Content);
}

// Every byte boundary: the verdict comes exactly when the event's empty line is complete, never
// earlier, and is the same as when fed whole.
TEST(StreamStart, SplitAtEveryByte_DecidesAtTheEventsEnd) {
  for (const std::string_view body :
       {kContent, kServerError, kContentFilter, kPromptFilterResults,
        std::string_view(": ping\r\n\r\nevent: error\r\ndata: {\"error\":\r\ndata: 1}\r\n\r\n")}) {
    SCOPED_TRACE(body);
    const auto whole = judge(body);
    const auto [bytewise, at] = judge_bytewise(body);
    EXPECT_EQ(bytewise.verdict(), whole.verdict());
    EXPECT_EQ(bytewise.reason(), whole.reason());
    EXPECT_EQ(at, body.size());
    // And split in two at every position.
    for (std::size_t cut = 0; cut <= body.size(); ++cut) {
      StreamStart s(kLimit);
      s.advance(body.substr(0, cut));
      EXPECT_EQ(s.advance(body), whole.verdict()) << "cut at " << cut;
      EXPECT_EQ(s.reason(), whole.reason());
    }
  }
}

TEST(StreamStart, ClassifyStreamError) {
  EXPECT_EQ(classify_stream_error("not json"), StartReason::ServerError);
  EXPECT_EQ(classify_stream_error("{\"error\":{\"code\":\"content_filter\"}}"), StartReason::ClientError);
  EXPECT_EQ(classify_stream_error("{\"error\":{\"code\":\"500\"}}"), StartReason::ServerError);
}

TEST(StreamStart, ReasonsHaveNames) {
  EXPECT_EQ(to_string(StartReason::ServerError), "server_error");
  EXPECT_EQ(to_string(StartReason::Limit), "limit");
}

}  // namespace
}  // namespace smartlb
