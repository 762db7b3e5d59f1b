#pragma once
// The start of a server-sent-events body, judged before any of it goes to the client: does the
// stream begin with content (release it), or with an error another backend might not have made
// (fail over)? Azure OpenAI can answer 200 and then send an error as an event, often after a
// first event that carries no content (the prompt's filter results).
//
// Fed the bytes held so far (a prefix that only grows: the caller appends each run it reads and
// passes the whole of it), it reads complete SSE events as the WHATWG rules frame them: lines
// end in LF, CRLF or CR; a line starting with ':' is a comment; `field: value` (one space after
// the colon dropped); an empty line ends an event, which counts only when it has `data`. Each
// event, in order, is one of:
//   * an error (`event: error`; a `data` JSON object with a non-null top-level `error`, of
//     `type` "error", or of `type` "response.failed"): FailOver, unless the error would be the
//     same on every backend (a content filter, an invalid request: see StartReason), then
//     Release;
//   * content: a chat / completions chunk with a choice whose `delta` holds anything but its
//     `role` (content, refusal, tool_calls, function_call, reasoning, ...; empty strings, empty
//     containers and null do not count), a non-empty legacy `text` or a non-null
//     `finish_reason`, or a non-null `usage`; a Responses API event other than its lifecycle
//     ones (output items, `*.delta`, `response.completed`, ...); `[DONE]`; data that is not a
//     JSON object, or one of neither shape (a stream we cannot judge goes as it is): Release;
//   * nothing yet: a chunk without content (Azure's prompt-filter-results event with empty
//     `choices`, a delta with only its role), `response.created` / `response.in_progress` /
//     `response.queued`, an empty `data`: read on.
// No decision within the first `limit` bytes: Release once that many are held. Only those bytes
// are read, so the verdict is the same however the body was split.
// Each event is read once it is complete, by a one-pass scanner that validates its JSON and
// allocates nothing; only an error event is parsed again (nlohmann) to classify it, and only an
// event of several `data` lines is copied (joined).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace smartlb {

enum class StartVerdict : std::uint8_t {
  Hold,      // nothing decisive yet: read more
  Release,   // write what is held, then relay as usual
  FailOver,  // the stream starts with an error: try the next backend
};

enum class StartReason : std::uint8_t {
  None,         // still holding
  Content,      // an event with content (or one that cannot be judged) came before any error
  Done,         // `[DONE]` came before any content
  ClientError,  // an error every backend would give (content filter, invalid request): relayed
  ServerError,  // any other error: a failover outcome, like a 5xx
  Limit,        // the limit was reached without an event that decides
};

std::string_view to_string(StartReason r);

class StreamStart {
 public:
  // `limit_bytes`: at this many held bytes without a decision, Release.
  explicit StreamStart(std::size_t limit_bytes) : limit_(limit_bytes) {}

  // `held` is every body byte so far, starting with those given before. Once the verdict is
  // not Hold it stays what it was.
  StartVerdict advance(std::string_view held);

  StartVerdict verdict() const { return verdict_; }
  StartReason reason() const { return reason_; }

 private:
  void on_line(std::string_view held, std::size_t begin, std::size_t end);
  void dispatch(std::string_view held, std::size_t stop);
  void decide(StartVerdict v, StartReason r) {
    verdict_ = v;
    reason_ = r;
  }

  std::size_t limit_;
  std::size_t scanned_ = 0;  // bytes of `held` read into complete lines
  // The current event: where its first `data` line's value is, and how many there are.
  std::size_t event_begin_ = 0;  // first byte of the event's first line
  std::size_t data_begin_ = 0, data_end_ = 0;
  unsigned data_lines_ = 0;
  bool error_event_ = false;  // `event: error`
  StartVerdict verdict_ = StartVerdict::Hold;
  StartReason reason_ = StartReason::None;
};

// What an error event's data says, for a stream that starts with one: ClientError for a content
// filter or an invalid request (the same prompt fails the same way everywhere), else
// ServerError. The error is a top-level `error` object, a Responses API `{"type":"error",
// "code":...}` event, or the `response.error` of a `response.failed` event. Not JSON, or no
// error there: ServerError.
StartReason classify_stream_error(std::string_view data);

}  // namespace smartlb
