#pragma once
// The ids in a stateful API's event stream (text/event-stream: Responses with stream: true, a
// stored response streamed again, Assistants runs), tagged event by event as the stream arrives:
// the event-stream reader (http/event_stream_reader) holds each event until its empty line, then
// its data goes through tag_json_ids and the event goes out -- every other byte (event:, id:,
// comments, line endings) as it came. An event whose data is not JSON ([DONE]) goes as it is.
//
// Memory: one event at a time. An event larger than the limit is passed on as it arrives,
// untagged (overflowed() tells), and the next one is tagged again.
#include <cstddef>
#include <string>
#include <string_view>

#include "smartlb/http/event_stream_reader.hpp"
#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::stateful {

class EventStreamTagger : private http::EventSink {
 public:
  static constexpr std::size_t kDefaultEventLimit = 4 * 1024 * 1024;

  explicit EventStreamTagger(const ResourceTag& tag, std::size_t event_limit = kDefaultEventLimit)
      : tag_(tag), reader_(event_limit) {}

  // Appends to `out` what `in` makes ready: every event it completes, tagged (and, while an
  // event is over the limit, its bytes as they come). The start of an unfinished event is held.
  // `also` is given each event as well, as it came (the stream's usage reader: one split for
  // both).
  void feed(std::string_view in, std::string& out, http::EventSink* also = nullptr);
  // The stream ended: an unfinished event held is appended (tagged where its data is complete JSON).
  void finish(std::string& out, http::EventSink* also = nullptr);

  std::size_t held_bytes() const { return reader_.held_bytes(); }
  bool overflowed() const { return reader_.overflowed(); }

 private:
  void on_event(const http::SseEvent& event) override;
  void on_bytes(std::string_view bytes) override { out_->append(bytes); }

  ResourceTag tag_;
  http::EventStreamReader reader_;
  std::string* out_ = nullptr;       // during a feed or finish: where events go
  http::EventSink* also_ = nullptr;  // ... and who else sees them
};

}  // namespace smartlb::stateful
