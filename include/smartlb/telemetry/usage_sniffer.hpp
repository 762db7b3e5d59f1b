#pragma once
// Reads the token `usage` out of a relayed response body without holding the body back.
// Fed the body bytes as they are relayed (after each write, so it never delays them):
//  - application/json: buffers up to a bounded size and parses `usage` at the end;
//  - text/event-stream: reads the events with the event-stream reader (http/event_stream_reader,
//    which copies only an event that spans reads) and keeps the data of the last event that
//    carried a `"usage": {...}` object; parses that one at the end. It is also a sink of that
//    reader, for a stream that another reader splits already (the id tagger's).
// Plain C++, no sockets; never copies a whole stream.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/http/event_stream_reader.hpp"
#include "smartlb/telemetry/response_facts.hpp"

namespace smartlb::telemetry {

struct TokenUsage {
  std::int64_t prompt_tokens = -1;      // -1: unknown
  std::int64_t completion_tokens = -1;  // -1: unknown
  // Of the prompt tokens, those read from the prompt cache (billed at the cached price); -1:
  // the answer did not say.
  std::int64_t cached_tokens = -1;
  bool known() const { return prompt_tokens >= 0 || completion_tokens >= 0; }
};

// Parses the `usage` object of one JSON document (chat/completions/embeddings use
// prompt_tokens/completion_tokens and prompt_tokens_details.cached_tokens; the Responses API
// uses input_tokens/output_tokens and input_tokens_details.cached_tokens; Anthropic's Messages
// API input_tokens/output_tokens, with its cache's tokens apart: cache_read_input_tokens and
// cache_creation_input_tokens count in the prompt, the first as its cached part).
TokenUsage parse_usage_json(std::string_view json);

class UsageSniffer : public http::EventSink {
 public:
  enum class Mode : std::uint8_t { Off, Json, EventStream };

  static constexpr std::size_t kDefaultJsonLimit = 1024 * 1024;
  static constexpr std::size_t kDefaultEventLimit = 64 * 1024;

  // The mode for a response's Content-Type and Content-Encoding (a compressed body is Off).
  static Mode mode_for(std::string_view content_type, std::string_view content_encoding = {});

  explicit UsageSniffer(Mode mode, std::size_t json_limit = kDefaultJsonLimit,
                        std::size_t event_limit = kDefaultEventLimit);

  Mode mode() const { return mode_; }
  // Also reads what the answer says of itself into `facts` (a traced request only: it costs
  // a pass of the JSON lexer over the body, or over every event of a stream). Before any feed.
  void read_facts_into(ResponseFacts* facts) { facts_ = facts; }
  void feed(const char* data, std::size_t size);
  void feed(std::string_view s) { feed(s.data(), s.size()); }
  // The usage found, once the body is complete. Unknown when none was seen, or the body was
  // larger than the limit, or not valid JSON.
  TokenUsage finish();
  // The last bytes of the body and then finish(): when they are the whole body (it came in
  // one read), a JSON body is scanned where it is instead of being copied first.
  TokenUsage finish_with(const char* data, std::size_t size);

  // One event of the stream (EventStream mode), as a reader that splits it for others too gives it.
  void on_event(const http::SseEvent& event) override;

  // Bytes currently held (for tests of the bound).
  std::size_t buffered_bytes() const {
    return body_.size() + events_.held_bytes() + last_.size() + first_.size();
  }
  // Heap bytes its texts reserve, held or not (for tests: a stream's events read in place).
  std::size_t allocated_bytes() const {
    std::size_t n = events_.allocated_bytes();
    for (const std::string* t : {&body_, &last_, &first_})
      if (t->capacity() > std::string().capacity()) n += t->capacity();
    return n;
  }

 private:
  Mode mode_;
  ResponseFacts* facts_ = nullptr;
  std::size_t json_limit_;
  std::size_t event_limit_;
  bool overflow_ = false;  // json: body over the limit
  std::string body_;       // json: the body so far

  http::EventStreamReader events_;  // event-stream: the events
  std::string last_;                // data of the last event that carried a usage object
  std::string first_;               // an Anthropic stream's message_start (its prompt's usage)
};

}  // namespace smartlb::telemetry
