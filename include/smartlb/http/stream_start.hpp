#pragma once
// The start of a server-sent-events body, judged before any of it goes to the client: does the
// stream begin with content (release it), or with an error another backend might not have made
// (fail over)? Azure OpenAI can answer 200 and then send an error as the stream's first event.
//
// Fed the bytes held so far (a prefix that only grows: the caller appends each run it reads and
// passes the whole of it), it reads complete SSE events as the WHATWG rules frame them: lines
// end in LF, CRLF or CR; a line starting with ':' is a comment; `field: value` (one space after
// the colon dropped); an empty line ends an event, which counts only when it has `data`.
//   * the first event is an error (`event: error`, or `data` holding a JSON object whose top
//     level has `error`): FailOver, unless the error would be the same on every backend (a
//     content filter, an invalid request: see StartReason), then Release;
//   * the first event is anything else (content, Azure's prompt-filter-results event with empty
//     `choices`, `[DONE]`): Release;
//   * no decision within the first `limit` bytes: Release once that many are held (a stream we
//     cannot judge goes as it is). Only those bytes are read, so the verdict is the same however
//     the body was split.
// No allocation unless an event that mentions "error" spans several `data` lines.
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
  Content,      // the first event is not an error
  Done,         // the first event is `[DONE]`
  ClientError,  // an error every backend would give (content filter, invalid request): relayed
  ServerError,  // any other error: a failover outcome, like a 5xx
  Limit,        // the limit was reached without a complete event
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
// ServerError. Not JSON, or no `error` object: ServerError.
StartReason classify_stream_error(std::string_view data);

}  // namespace smartlb
