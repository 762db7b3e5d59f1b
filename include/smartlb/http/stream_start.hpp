#pragma once
// The start of a server-sent-events body, judged before any of it goes to the client: does the
// stream begin with content (release it), or with an error another backend might not have made
// (fail over)? Azure OpenAI can answer 200 and then send an error as an event, often after a
// first event that carries no content (the prompt's filter results).
//
// Fed the bytes held so far (a prefix that only grows: the caller appends each run it reads and
// passes the whole of it), it reads their events with the event-stream reader
// (http/event_stream_reader). Each event, in order: `[DONE]` releases; an event of type `error`
// fails over unless its data says the error would be the same on every backend
// (classify_stream_error); for any other, its data decides (judge_stream_event): content or an
// error the client made release, a server's error fails over, and an event without content (an
// empty `data` line too) reads on.
// No decision within the first `limit` bytes: Release once that many are held. Only those bytes
// are read, so the verdict is the same however the body was split.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "smartlb/http/event_stream_reader.hpp"
#include "smartlb/http/stream_event.hpp"

namespace smartlb::http {

enum class StartVerdict : std::uint8_t {
  Hold,      // nothing decisive yet: read more
  Release,   // write what is held, then relay as usual
  FailOver,  // the stream starts with an error: try the next backend
};

class StreamStart : private EventSink {
 public:
  // `limit_bytes`: at this many held bytes without a decision, Release.
  explicit StreamStart(std::size_t limit_bytes) : limit_(limit_bytes), reader_(limit_bytes) {}

  // `held` is every body byte so far, starting with those given before. Once the verdict is
  // not Hold it stays what it was.
  StartVerdict advance(std::string_view held);

  StartVerdict verdict() const { return verdict_; }
  StartReason reason() const { return reason_; }

 private:
  void on_event(const SseEvent& event) override;
  void decide(StartVerdict v, StartReason r) {
    verdict_ = v;
    reason_ = r;
  }

  std::size_t limit_;
  std::size_t fed_ = 0;  // bytes of `held` given to the reader
  EventStreamReader reader_;
  StartVerdict verdict_ = StartVerdict::Hold;
  StartReason reason_ = StartReason::None;
};

}  // namespace smartlb::http
