#include "smartlb/http/stream_start.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb {
namespace stream_start_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr std::size_t kLimit = 64 * 1024;

// Fed whole, in one call.
http::StreamStart judge(std::string_view body, std::size_t limit = kLimit) {
  http::StreamStart s(limit);
  s.advance(body);
  return s;
}

// Fed a byte at a time, as a growing prefix: the verdict after the last byte, and the number of
// bytes it took to reach it (body.size() + 1 when it never left Hold).
std::pair<http::StreamStart, std::size_t> judge_bytewise(std::string_view body, std::size_t limit = kLimit) {
  http::StreamStart s(limit);
  for (std::size_t n = 1; n <= body.size(); ++n)
    if (s.advance(body.substr(0, n)) != http::StartVerdict::Hold) return {s, n};
  return {s, body.size() + 1};
}

// Fed as a growing prefix cut once at every position: each verdict equals the one fed whole.
void expect_same_verdict_however_cut(std::string_view body, std::size_t limit = kLimit) {
  const auto whole = judge(body, limit);
  for (std::size_t cut = 0; cut <= body.size(); ++cut) {
    http::StreamStart s(limit);
    s.advance(body.substr(0, cut));
    EXPECT_EQ(s.advance(body), whole.verdict()) << "cut at " << cut;
    EXPECT_EQ(s.reason(), whole.reason()) << "cut at " << cut;
  }
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
  http::StreamStart s(kLimit);
  EXPECT_EQ(s.advance(""), http::StartVerdict::Hold);
  EXPECT_EQ(s.reason(), http::StartReason::None);
}

TEST(StreamStart, ContentFirst_Releases) {
  const auto s = judge(kContent);
  EXPECT_EQ(s.verdict(), http::StartVerdict::Release);
  EXPECT_EQ(s.reason(), http::StartReason::Content);
}

TEST(StreamStart, AzurePromptFilterResultsAlone_Holds) {
  // It carries no content: what comes next (content, or an error) decides.
  const auto s = judge(kPromptFilterResults);
  EXPECT_EQ(s.verdict(), http::StartVerdict::Hold);
  EXPECT_EQ(s.reason(), http::StartReason::None);
}

TEST(StreamStart, DoneFirst_Releases) {
  const auto s = judge("data: [DONE]\n\n");
  EXPECT_EQ(s.verdict(), http::StartVerdict::Release);
  EXPECT_EQ(s.reason(), http::StartReason::Done);
}

TEST(StreamStart, ServerErrorDataFirst_FailsOver) {
  const auto s = judge(kServerError);
  EXPECT_EQ(s.verdict(), http::StartVerdict::FailOver);
  EXPECT_EQ(s.reason(), http::StartReason::ServerError);
}

TEST(StreamStart, ErrorAsAString_FailsOver) {
  EXPECT_EQ(judge("data: {\"error\":\"boom\"}\n\n").verdict(), http::StartVerdict::FailOver);
}

TEST(StreamStart, ErrorEventType_FailsOverWhateverItsData) {
  EXPECT_EQ(judge("event: error\ndata: upstream went away\n\n").verdict(), http::StartVerdict::FailOver);
  EXPECT_EQ(judge("event: error\ndata: {\"message\":\"x\"}\n\n").reason(), http::StartReason::ServerError);
}

TEST(StreamStart, ContentFilterErrorFirst_IsReleasedNotFailedOver) {
  const auto s = judge(kContentFilter);
  EXPECT_EQ(s.verdict(), http::StartVerdict::Release);
  EXPECT_EQ(s.reason(), http::StartReason::ClientError);
  EXPECT_EQ(judge("event: error\ndata: {\"error\":{\"code\":\"content_filter\"}}\n\n").verdict(),
            http::StartVerdict::Release);
  EXPECT_EQ(
      judge("data: {\"error\":{\"code\":\"x\",\"innererror\":{\"code\":\"ResponsibleAIPolicyViolation\"}}}"
            "\n\n")
          .reason(),
      http::StartReason::ClientError);
}

TEST(StreamStart, InvalidRequestErrorFirst_IsReleased) {
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"invalid_request_error\",\"code\":null}}\n\n").reason(),
            http::StartReason::ClientError);
  EXPECT_EQ(judge("data: {\"error\":{\"code\":\"context_length_exceeded\"}}\n\n").reason(),
            http::StartReason::ClientError);
}

TEST(StreamStart, NullErrorMember_IsNotAnError) {
  const auto s = judge("data: {\"error\":null,\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
  EXPECT_EQ(s.verdict(), http::StartVerdict::Release);
  EXPECT_EQ(s.reason(), http::StartReason::Content);
  EXPECT_EQ(judge("data: {\"error\":null,\"choices\":[]}\n\n").verdict(), http::StartVerdict::Hold);
}

TEST(StreamStart, NestedErrorKey_IsContent) {
  EXPECT_EQ(judge("data: {\"choices\":[{\"delta\":{\"error\":1}}]}\n\n").reason(),
            http::StartReason::Content);
}

TEST(StreamStart, ErrorAfterContent_IsNotLookedAt) {
  const std::string body = std::string(kContent) + std::string(kServerError);
  EXPECT_EQ(judge(body).reason(), http::StartReason::Content);
}

TEST(StreamStart, IncompleteEvent_Holds) {
  EXPECT_EQ(judge("data: {\"error\":{}}\n").verdict(), http::StartVerdict::Hold);  // no empty line yet
  EXPECT_EQ(judge("data: {\"choices\":[]}").verdict(), http::StartVerdict::Hold);
}

TEST(StreamStart, CommentsAndEventsWithoutData_AreSkipped) {
  const auto held = judge(": keep-alive\n\n: ping\nevent: error\n\n");
  EXPECT_EQ(held.verdict(), http::StartVerdict::Hold);  // an event without data is not dispatched
  const std::string body =
      std::string(": keep-alive\n\nevent: error\n\nid: 1\nretry: 10\n\n") + std::string(kServerError);
  EXPECT_EQ(judge(body).verdict(), http::StartVerdict::FailOver);  // the error type did not carry over
  const std::string body2 = std::string(": keep-alive\n\nevent: error\n\n") + std::string(kContent);
  EXPECT_EQ(judge(body2).reason(), http::StartReason::Content);
}

TEST(StreamStart, CrlfAndCrLineEndings) {
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"server_error\"}}\r\n\r\n").verdict(),
            http::StartVerdict::FailOver);
  // CR alone ends a line too, the last byte held included (a LF after it is its pair, skipped):
  // a stream whose lines end in CR is judged at its event's end, not at the next event.
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"server_error\"}}\r\r").verdict(),
            http::StartVerdict::FailOver);
  EXPECT_EQ(judge(": hi\r\ndata: [DONE]\r\n\r\n").reason(), http::StartReason::Done);
  EXPECT_EQ(judge("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n\r").reason(),
            http::StartReason::Content);
  EXPECT_EQ(judge("data: {\"error\":{\"type\":\"server_error\"}}\r\n").verdict(), http::StartVerdict::Hold)
      << "no empty line yet";
}

TEST(StreamStart, MultiLineData_IsJoinedWithLf) {
  EXPECT_EQ(judge("data: {\"error\":\ndata: {\"type\":\"server_error\"}}\n\n").verdict(),
            http::StartVerdict::FailOver);
  EXPECT_EQ(judge("data: {\"error\":\r\ndata: {\"code\":\"content_filter\"}}\r\n\r\n").reason(),
            http::StartReason::ClientError);
  EXPECT_EQ(judge("event: error\ndata: {\"error\":\ndata: {\"code\":\"content_filter\"}}\n\n").reason(),
            http::StartReason::ClientError);
  EXPECT_EQ(judge("data: {\"choices\":\ndata: [{\"text\":\"a\"}]}\n\n").reason(), http::StartReason::Content);
  EXPECT_EQ(judge("data: {\"choices\":\ndata: []}\n\n").verdict(), http::StartVerdict::Hold);
  // Only one data line of exactly [DONE] is the end marker.
  EXPECT_EQ(judge("data: [DONE]\ndata: x\n\n").reason(), http::StartReason::Content);
}

TEST(StreamStart, FieldSyntax_OneSpaceDroppedNoSpaceAllowed) {
  EXPECT_EQ(judge("data:{\"error\":{}}\n\n").verdict(), http::StartVerdict::FailOver);
  EXPECT_EQ(judge("event:error\ndata:x\n\n").verdict(), http::StartVerdict::FailOver);
  EXPECT_EQ(judge("event:  error\ndata: x\n\n").reason(), http::StartReason::Content);  // type " error"
  EXPECT_EQ(judge("data:[DONE]\n\n").reason(), http::StartReason::Done);
}

TEST(StreamStart, AFieldWithoutAColon_HasAnEmptyValue) {
  // `data` alone is a data line with an empty value: the data is "\n" + the next line's (still
  // JSON, with a leading blank).
  EXPECT_EQ(judge("data\ndata: {\"error\":{}}\n\n").reason(), http::StartReason::ServerError);
  // A single empty data line is an empty event, which an SSE client does not dispatch: a
  // keep-alive, held like a comment.
  EXPECT_EQ(judge("data\n\n").verdict(), http::StartVerdict::Hold);
  EXPECT_EQ(judge("data:\n\ndata: [DONE]\n\n").reason(), http::StartReason::Done);
  EXPECT_EQ(judge("event: error\ndata\ndata: {\"error\":\ndata: {\"code\":\"content_filter\"}}\n\n").reason(),
            http::StartReason::ClientError);
}

TEST(StreamStart, LimitWithoutACompleteEvent_Releases) {
  const std::string body = "data: " + std::string(100, 'x');
  http::StreamStart s(64);
  EXPECT_EQ(s.advance(std::string_view(body).substr(0, 63)), http::StartVerdict::Hold);
  EXPECT_EQ(s.advance(std::string_view(body).substr(0, 64)), http::StartVerdict::Release);
  EXPECT_EQ(s.reason(), http::StartReason::Limit);
}

TEST(StreamStart, AnEventCompletingPastTheLimit_IsNotSeenHoweverItArrived) {
  const std::string body = "data: " + std::string(60, 'x') + "\n\n";  // 68 bytes
  EXPECT_EQ(judge(body, 64).reason(), http::StartReason::Limit);
  EXPECT_EQ(judge_bytewise(body, 64).first.reason(), http::StartReason::Limit);
  EXPECT_EQ(judge(body, 68).reason(), http::StartReason::Content);
}

TEST(StreamStart, DecisionIsFinal) {
  http::StreamStart s(kLimit);
  std::string body(kContent);
  EXPECT_EQ(s.advance(body), http::StartVerdict::Release);
  body += kServerError;
  EXPECT_EQ(s.advance(body), http::StartVerdict::Release);
  EXPECT_EQ(s.reason(), http::StartReason::Content);
}

// Every byte boundary: the verdict comes exactly when the event's empty line ends (its CR, when
// it ends in CRLF), never earlier, and is the same as when fed whole.
TEST(StreamStart, SplitAtEveryByte_DecidesAtTheEventsEnd) {
  for (const std::string_view body :
       {kContent, kServerError, kContentFilter,
        std::string_view(": ping\r\n\r\nevent: error\r\ndata: {\"error\":\r\ndata: 1}\r\n\r\n")}) {
    SCOPED_TRACE(body);
    const auto whole = judge(body);
    const auto [bytewise, at] = judge_bytewise(body);
    EXPECT_EQ(bytewise.verdict(), whole.verdict());
    EXPECT_EQ(bytewise.reason(), whole.reason());
    EXPECT_EQ(at, body.ends_with("\r\n") ? body.size() - 1 : body.size());
    expect_same_verdict_however_cut(body);
  }
}

// Recorded shapes of Azure OpenAI and OpenAI streams (ids, times and filter results shortened).
// Azure's chat stream: the prompt's filter results first (no choices, empty id and model), then
// a delta holding only the role, then content.
constexpr std::string_view kAzurePromptFilter =
    R"(data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,)"
    R"("content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,)"
    R"("detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,)"
    R"("severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]})"
    "\n\n";
constexpr std::string_view kAzureRoleOnly =
    R"(data: {"choices":[{"content_filter_results":{},"delta":{"content":"","refusal":null,"role":"assistant"},)"
    R"("finish_reason":null,"index":0,"logprobs":null}],"created":1733000000,"id":"chatcmpl-AbC",)"
    R"("model":"gpt-4o-2024-08-06","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291"})"
    "\n\n";
constexpr std::string_view kAzureContent =
    R"(data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},)"
    R"("delta":{"content":"Hello"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733000000,)"
    R"("id":"chatcmpl-AbC","model":"gpt-4o-2024-08-06","object":"chat.completion.chunk",)"
    R"("system_fingerprint":"fp_b705f0c291"})"
    "\n\n";
constexpr std::string_view kAzureServerError =
    R"(data: {"error":{"message":"The server had an error processing your request. Sorry about that!",)"
    R"("type":"server_error","param":null,"code":null}})"
    "\n\n";
constexpr std::string_view kAzureContentFilterError =
    R"(data: {"error":{"code":"content_filter","message":"The response was filtered due to the prompt )"
    R"(triggering Azure OpenAI's content management policy.","param":"prompt","status":400,)"
    R"("innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,)"
    R"("severity":"high"}}}}})"
    "\n\n";
// The Responses API: lifecycle events, then output items and deltas.
constexpr std::string_view kResponseCreated =
    "event: response.created\n"
    R"(data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response",)"
    R"("created_at":1741290958,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1",)"
    R"("output":[],"usage":null}})"
    "\n\n";
constexpr std::string_view kResponseInProgress =
    "event: response.in_progress\n"
    R"(data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response",)"
    R"("status":"in_progress","error":null,"output":[],"usage":null}})"
    "\n\n";
constexpr std::string_view kResponseOutputItemAdded =
    "event: response.output_item.added\n"
    R"(data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_1",)"
    R"("type":"message","status":"in_progress","content":[],"role":"assistant"}})"
    "\n\n";
constexpr std::string_view kResponseTextDelta =
    "event: response.output_text.delta\n"
    R"(data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,)"
    R"("content_index":0,"delta":"Hi"})"
    "\n\n";
constexpr std::string_view kResponseErrorEvent =
    "event: error\n"
    R"(data: {"type":"error","code":"server_error","message":"The server had an error while processing )"
    R"(your request.","param":null,"sequence_number":2})"
    "\n\n";
constexpr std::string_view kResponseFailed =
    "event: response.failed\n"
    R"(data: {"type":"response.failed","sequence_number":2,"response":{"id":"resp_1","object":"response",)"
    R"("status":"failed","error":{"code":"server_error","message":"The server had an error."},"output":[],)"
    R"("usage":null}})"
    "\n\n";

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (const std::string_view p : parts) s += p;
  return s;
}

// `body` (LF line endings, no LF inside a line) with each LF replaced by `eol`.
std::string with_line_endings(std::string_view body, std::string_view eol) {
  std::string out;
  for (const char c : body)
    if (c == '\n')
      out += eol;
    else
      out += c;
  return out;
}

// Whole, a byte at a time and cut once anywhere, with LF, CRLF and CR line endings: always
// `verdict` for `reason`, reached with the last byte and not before.
void expect_verdict_however_split(std::string_view lf_body, http::StartVerdict verdict,
                                  http::StartReason reason) {
  for (const std::string_view eol : {"\n", "\r\n", "\r"}) {
    const std::string body = with_line_endings(lf_body, eol);
    SCOPED_TRACE(body);
    const auto whole = judge(body);
    EXPECT_EQ(whole.verdict(), verdict);
    EXPECT_EQ(whole.reason(), reason);
    const auto [bytewise, at] = judge_bytewise(body);
    EXPECT_EQ(bytewise.verdict(), verdict);
    EXPECT_EQ(bytewise.reason(), reason);
    EXPECT_EQ(at, verdict == http::StartVerdict::Hold ? body.size() + 1
                  : eol == "\r\n"                     ? body.size() - 1
                                                      : body.size());
    expect_same_verdict_however_cut(body);
  }
}

TEST(StreamStart, AzurePromptFilterThenContent_ReleasesAtTheContent) {
  expect_verdict_however_split(kAzurePromptFilter, http::StartVerdict::Hold, http::StartReason::None);
  expect_verdict_however_split(cat({kAzurePromptFilter, kAzureContent}), http::StartVerdict::Release,
                               http::StartReason::Content);
}

TEST(StreamStart, AzurePromptFilterThenServerError_FailsOver) {
  expect_verdict_however_split(cat({kAzurePromptFilter, kAzureServerError}), http::StartVerdict::FailOver,
                               http::StartReason::ServerError);
}

TEST(StreamStart, AzurePromptFilterThenContentFilterError_IsReleased) {
  expect_verdict_however_split(cat({kAzurePromptFilter, kAzureContentFilterError}),
                               http::StartVerdict::Release, http::StartReason::ClientError);
}

TEST(StreamStart, RoleOnlyFirstDelta_HoldsUntilContent) {
  expect_verdict_however_split(cat({kAzurePromptFilter, kAzureRoleOnly}), http::StartVerdict::Hold,
                               http::StartReason::None);
  expect_verdict_however_split(cat({kAzurePromptFilter, kAzureRoleOnly, kAzureContent}),
                               http::StartVerdict::Release, http::StartReason::Content);
  // An error after the role-only delta still fails over: nothing reached the client yet.
  expect_verdict_however_split(cat({kAzureRoleOnly, kAzureServerError}), http::StartVerdict::FailOver,
                               http::StartReason::ServerError);
}

TEST(StreamStart, ResponsesLifecycleThenOutput_ReleasesAtTheFirstOutput) {
  expect_verdict_however_split(cat({kResponseCreated, kResponseInProgress}), http::StartVerdict::Hold,
                               http::StartReason::None);
  expect_verdict_however_split(cat({kResponseCreated, kResponseInProgress, kResponseOutputItemAdded}),
                               http::StartVerdict::Release, http::StartReason::Content);
  expect_verdict_however_split(cat({kResponseCreated, kResponseTextDelta}), http::StartVerdict::Release,
                               http::StartReason::Content);
}

TEST(StreamStart, ResponsesErrorEvent_FailsOverUnlessTheClientsError) {
  expect_verdict_however_split(cat({kResponseCreated, kResponseErrorEvent}), http::StartVerdict::FailOver,
                               http::StartReason::ServerError);
  // The same event without its `event:` line: its data's type says it.
  EXPECT_EQ(judge("data: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"x\"}\n\n").verdict(),
            http::StartVerdict::FailOver);
  EXPECT_EQ(
      judge("event: error\ndata: {\"type\":\"error\",\"code\":\"content_filter\",\"message\":\"x\"}\n\n")
          .reason(),
      http::StartReason::ClientError);
  EXPECT_EQ(
      judge("data: {\"type\":\"error\",\"code\":\"invalid_prompt\",\"message\":\"flagged\"}\n\n").reason(),
      http::StartReason::ClientError);
  EXPECT_EQ(judge("data: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\"}}\n\n").reason(),
            http::StartReason::ClientError);
}

TEST(StreamStart, ResponseFailed_FailsOverUnlessTheClientsError) {
  expect_verdict_however_split(cat({kResponseCreated, kResponseInProgress, kResponseFailed}),
                               http::StartVerdict::FailOver, http::StartReason::ServerError);
  EXPECT_EQ(
      judge("data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"invalid_prompt\"}}}\n\n")
          .reason(),
      http::StartReason::ClientError);
  EXPECT_EQ(judge("data: {\"type\":\"response.failed\",\"response\":{\"error\":null}}\n\n").reason(),
            http::StartReason::ServerError);
  EXPECT_EQ(judge("data: {\"type\":\"response.failed\"}\n\n").reason(), http::StartReason::ServerError);
}

TEST(StreamStart, EveryKindOfChatContent_Releases) {
  for (const std::string_view event : {
           R"({"choices":[{"delta":{"content":"a"}}]})",
           R"({"choices":[{"delta":{"role":"assistant","refusal":"I can't help with that."}}]})",
           R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f"}}]}}]})",
           R"({"choices":[{"delta":{"function_call":{"name":"f","arguments":""}}}]})",
           R"({"choices":[{"delta":{"role":"assistant","content":null,"reasoning_content":"Let me see"}}]})",
           R"({"choices":[{"delta":{"reasoning":"Let me see"}}]})",
           R"({"choices":[{"text":"Once","index":0,"finish_reason":null}]})",  // legacy completions
           R"({"choices":[{"delta":{},"finish_reason":"stop","index":0}]})",   // a stream that ends
           R"({"choices":[{"delta":{},"finish_reason":"content_filter","index":0}]})",
           R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":0,"total_tokens":9}})",
           R"({"choices":[{"index":1,"delta":{"role":"assistant"}},{"index":0,"delta":{"content":"a"}}]})",
       }) {
    SCOPED_TRACE(event);
    const auto s = judge(cat({kAzurePromptFilter, "data: ", event, "\n\n"}));
    EXPECT_EQ(s.verdict(), http::StartVerdict::Release);
    EXPECT_EQ(s.reason(), http::StartReason::Content);
  }
}

TEST(StreamStart, EventsWithoutContent_Hold) {
  for (const std::string_view event : {
           "data: {\"choices\":[]}\n\n",
           "data: {\"choices\":[],\"prompt_filter_results\":[]}\n\n",
           "data: {\"prompt_filter_results\":[{\"prompt_index\":0}]}\n\n",
           "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
           "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":null}}]}\n\n",
           "data: "
           "{\"choices\":[{\"delta\":{\"tool_calls\":[],\"function_call\":null,\"reasoning_content\":\"\"}}]}"
           "\n\n",
           "data: {\"choices\":[{\"delta\":{\"reasoning\":{}}}]}\n\n",
           "data: {\"choices\":[{\"delta\":{},\"finish_reason\":null,\"index\":0}]}\n\n",
           "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":null}]}\n\n",
           "data: {\"choices\":[],\"usage\":null}\n\n",
           "data: "
           "{\"choices\":[{\"index\":0,\"content_filter_results\":{\"hate\":{\"filtered\":false}}}]}\n\n",
           "data: {\"type\":\"response.created\",\"response\":{\"error\":null,\"output\":[]}}\n\n",
           "data: {\"type\":\"response.in_progress\"}\n\n",
           "data: {\"type\":\"response.queued\"}\n\n",
           ": keep-alive\n\n",
           "data:\n\n",  // an empty event: not dispatched
           "event: ping\n\n",
           "id: 7\nretry: 1000\n\n",
       }) {
    SCOPED_TRACE(event);
    const auto s = judge(event);
    EXPECT_EQ(s.verdict(), http::StartVerdict::Hold);
    EXPECT_EQ(s.reason(), http::StartReason::None);
  }
}

TEST(StreamStart, ResponsesOutputEvents_Release) {
  for (const std::string_view type :
       {"response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.function_call_arguments.delta", "response.reasoning_summary_text.delta",
        "response.completed", "response.incomplete", "response.some_event_to_come"}) {
    SCOPED_TRACE(type);
    const auto s = judge(cat({kResponseCreated, "data: {\"type\":\"", type, "\"}\n\n"}));
    EXPECT_EQ(s.verdict(), http::StartVerdict::Release);
    EXPECT_EQ(s.reason(), http::StartReason::Content);
  }
}

TEST(StreamStart, WhatCannotBeReadAsAJsonObject_Releases) {
  // A stream we cannot judge goes as it is.
  for (const std::string_view event :
       {"data: hello\n\n", "data: {\"choices\":[\n\n", "data: {\"choices\":[]} x\n\n", "data: [1,2]\n\n",
        "data: \"text\"\n\n", "data: {\"choices\":[],\"a\":1e999}\n\n",
        "data: {\"choices\":[],\"a\":\"\xff\"}\n\n", "data: {\"n\":1}\n\n"}) {
    SCOPED_TRACE(event);
    const std::string body = cat({kAzurePromptFilter, event});
    EXPECT_EQ(judge(body).reason(), http::StartReason::Content);
  }
}

// Judged as `{"choices":[],"v":<value>}`: a valid event without content holds, an invalid one
// is released as it is. Valid is what nlohmann::json accepts.
http::StartVerdict verdict_with_value(std::string_view value) {
  return judge(cat({"data: {\"choices\":[],\"v\":", value, "}\n\n"})).verdict();
}

TEST(StreamStart, EventsAreValidatedAsJson) {
  for (const std::string_view valid : std::initializer_list<std::string_view>{
           "0", "-0", "12.5e-3", "1E+2", "-1.0e308", "1e-999", "true", "false", "null", "\"\"",
           "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u00e9\\uD83D\\uDE00\"",
           "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "[]", "{}", " [ 1 , { \"a\" : [ ] } ] ", "\"\x7f\"",
           std::string_view("\"\\u0000\"", 8)}) {
    SCOPED_TRACE(valid);
    EXPECT_EQ(verdict_with_value(valid), http::StartVerdict::Hold);
  }
  for (const std::string_view invalid : {"",
                                         "01",
                                         "1.",
                                         ".5",
                                         "+1",
                                         "-",
                                         "1e",
                                         "1e+",
                                         "1e999",
                                         "-1e999",
                                         "tru",
                                         "nul",
                                         "True",
                                         "\"a",
                                         "\"\\x\"",
                                         "\"\\u12\"",
                                         "\"\\uD83D\"",
                                         "\"\\uDE00\"",
                                         "\"\\uD83Dx\"",
                                         "\"\\uD83D\\u0041\"",
                                         "\"\t\"",
                                         "\"\xc0\xaf\"",
                                         "\"\xe0\x80\xaf\"",
                                         "\"\xed\xa0\x80\"",
                                         "\"\xf4\x90\x80\x80\"",
                                         "\"\x80\"",
                                         "\"\xc3\"",
                                         "[1,]",
                                         "[1 2]",
                                         "{\"a\"}",
                                         "{\"a\":1,}",
                                         "{1:2}",
                                         "[}",
                                         "{]",
                                         "[",
                                         "]",
                                         "1}",
                                         "NaN"}) {
    SCOPED_TRACE(invalid);
    EXPECT_EQ(verdict_with_value(invalid), http::StartVerdict::Release);
  }
  // A byte-order mark may lead the data, nowhere else.
  EXPECT_EQ(judge("data: \xEF\xBB\xBF{\"choices\":[]}\n\n").verdict(), http::StartVerdict::Hold);
  EXPECT_EQ(verdict_with_value("\xEF\xBB\xBF"
                               "1"),
            http::StartVerdict::Release);
  // A 400-digit integer overflows a double.
  EXPECT_EQ(verdict_with_value(std::string(400, '9')), http::StartVerdict::Release);
  EXPECT_EQ(verdict_with_value(std::string(300, '9')), http::StartVerdict::Hold);
  // Deep nesting is read to its end (past the levels kept inline).
  EXPECT_EQ(verdict_with_value(std::string(2000, '[') + std::string(2000, ']')), http::StartVerdict::Hold);
  EXPECT_EQ(verdict_with_value(std::string(2000, '[') + std::string(1999, ']')), http::StartVerdict::Release);
  EXPECT_EQ(verdict_with_value(std::string(1000, '[') + "{}" + std::string(999, ']') + "}"),
            http::StartVerdict::Release);
}

TEST(StreamStart, EscapedNamesMeanWhatTheySpell) {
  // "r\u006fle" is `role`, "c\u006fntent" is `content`, "ch\u006fices" is `choices`.
  EXPECT_EQ(judge("data: {\"ch\\u006fices\":[{\"delta\":{\"r\\u006fle\":\"assistant\"}}]}\n\n").verdict(),
            http::StartVerdict::Hold);
  EXPECT_EQ(judge("data: {\"choices\":[{\"delta\":{\"c\\u006fntent\":\"a\"}}]}\n\n").reason(),
            http::StartReason::Content);
  EXPECT_EQ(judge("data: {\"type\":\"response.cr\\u0065ated\"}\n\n").verdict(), http::StartVerdict::Hold);
  EXPECT_EQ(judge("data: {\"\\u0065rror\":{\"type\":\"server_error\"}}\n\n").verdict(),
            http::StartVerdict::FailOver);
}

TEST(StreamStart, ATopLevelErrorBesideContent_IsStillAnError) {
  EXPECT_EQ(
      judge("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"error\":{\"type\":\"server_error\"}}\n\n")
          .verdict(),
      http::StartVerdict::FailOver);
  EXPECT_EQ(
      judge(cat({kAzurePromptFilter, "data: {\"choices\":[],\"error\":{\"code\":\"content_filter\"}}\n\n"}))
          .reason(),
      http::StartReason::ClientError);
}

TEST(StreamStart, ManyEventsWithoutContent_ReleaseAtTheLimit) {
  std::string body;
  while (body.size() < 4096) body += kAzurePromptFilter;
  body += kAzureServerError;
  const auto [s, at] = judge_bytewise(body, 4096);
  EXPECT_EQ(s.reason(), http::StartReason::Limit);
  EXPECT_EQ(at, 4096u);
}

TEST(StreamStart, ClassifyStreamError) {
  EXPECT_EQ(http::classify_stream_error("not json"), http::StartReason::ServerError);
  EXPECT_EQ(http::classify_stream_error("{\"error\":{\"code\":\"content_filter\"}}"),
            http::StartReason::ClientError);
  EXPECT_EQ(http::classify_stream_error("{\"error\":{\"code\":\"500\"}}"), http::StartReason::ServerError);
  EXPECT_EQ(http::classify_stream_error("{\"type\":\"error\",\"code\":\"content_filter\"}"),
            http::StartReason::ClientError);
  EXPECT_EQ(http::classify_stream_error("{\"type\":\"error\",\"code\":\"rate_limit_exceeded\"}"),
            http::StartReason::ServerError);
}

TEST(StreamStart, ReasonsHaveNames) {
  EXPECT_EQ(to_string(http::StartReason::ServerError), "server_error");
  EXPECT_EQ(to_string(http::StartReason::Limit), "limit");
}

}  // namespace stream_start_test
}  // namespace smartlb
