#pragma once
// What one server-sent event's data says about the start of a stream (http/stream_start reads
// the events): content, nothing yet, or an error, and whose error it is. The JSON is read by the
// lexer (http/json_lexer) in one pass that allocates nothing; only an error event is parsed
// again (nlohmann) to classify it.
#include <cstdint>
#include <string_view>

namespace smartlb::http {

enum class StartReason : std::uint8_t {
  None,         // still holding
  Content,      // an event with content (or one that cannot be judged) came before any error
  Done,         // `[DONE]` came before any content
  ClientError,  // an error every backend would give (content filter, invalid request): relayed
  ServerError,  // any other error: a failover outcome, like a 5xx
  Limit,        // the limit was reached without an event that decides
};

std::string_view to_string(StartReason r);

// One event's data (not `[DONE]`, not empty, not of an `event: error`):
//   * an error (a JSON object with a non-null top-level `error`, of `type` "error", or of `type`
//     "response.failed"): classify_stream_error's answer;
//   * content: a chat / completions chunk with a choice whose `delta` holds anything but its
//     `role` (content, refusal, tool_calls, function_call, reasoning, ...; empty strings, empty
//     containers and null do not count), a non-empty legacy `text` or a non-null
//     `finish_reason`, or a non-null `usage`; a Responses API event other than its lifecycle
//     ones (output items, `*.delta`, `response.completed`, ...); data that is not a JSON object,
//     or one of neither shape (a stream we cannot judge goes as it is): Content;
//   * nothing yet: a chunk without content (Azure's prompt-filter-results event with empty
//     `choices`, a delta with only its role), `response.created` / `response.in_progress` /
//     `response.queued`, Anthropic's `message_start` / `content_block_start` / `ping`: None.
//     (Anthropic's `content_block_delta` and what follows it is content; its `error` event,
//     `{"type":"error","error":{"type":"overloaded_error",...}}`, an error like any other.)
// Of a duplicated member, any occurrence counts.
StartReason judge_stream_event(std::string_view data);

// What an error event's data says, for a stream that starts with one: ClientError for a content
// filter or an invalid request (the same prompt fails the same way everywhere), else
// ServerError. The error is a top-level `error` object, a Responses API `{"type":"error",
// "code":...}` event, or the `response.error` of a `response.failed` event. Not JSON, or no
// error there: ServerError.
StartReason classify_stream_error(std::string_view data);

}  // namespace smartlb::http
