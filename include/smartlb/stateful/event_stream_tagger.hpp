#pragma once
// The ids in a stateful API's event stream (text/event-stream: Responses with stream: true, a
// stored response streamed again, Assistants runs), tagged event by event as the stream arrives:
// each event is held until its blank line, then its `data:` JSON goes through tag_json_ids and
// the event goes out -- every other byte (event:, id:, comments, line endings) as it came.
// An event whose data is not JSON ([DONE]) goes as it is.
//
// Memory: one event at a time. An event larger than the limit is passed on as it arrives,
// untagged (overflowed() tells), and the next one is tagged again.
#include <cstddef>
#include <string>
#include <string_view>

#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::stateful {

class EventStreamTagger {
 public:
  static constexpr std::size_t kDefaultEventLimit = 4 * 1024 * 1024;

  explicit EventStreamTagger(const ResourceTag& tag, std::size_t event_limit = kDefaultEventLimit)
      : tag_(tag), limit_(event_limit) {}

  // Appends to `out` what `in` makes ready: every event it completes, tagged (and, while an
  // event is over the limit, its bytes as they come). The start of an unfinished event is held.
  void feed(std::string_view in, std::string& out);
  // The stream ended: an unfinished event held is appended (tagged where its data is complete JSON).
  void finish(std::string& out);

  std::size_t held_bytes() const { return event_.size(); }
  bool overflowed() const { return overflowed_; }

 private:
  void put(std::string_view bytes, std::string& out);
  void end_event(std::string& out);
  void write_event(std::string_view event, std::string& out) const;

  ResourceTag tag_;
  std::size_t limit_;
  std::string event_;           // the current event's bytes so far
  std::size_t line_bytes_ = 0;  // of the current line, its terminator not counted
  bool after_cr_ = false;       // the last byte fed ended a line with CR: a LF next is part of it
  bool lf_to_out_ = false;      // ... and that CR ended an event, which went out already
  bool passing_ = false;        // the current event is over the limit: its bytes go out as they come
  bool overflowed_ = false;
};

}  // namespace smartlb::stateful
