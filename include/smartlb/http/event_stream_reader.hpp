#pragma once
// The one reader of server-sent events (text/event-stream): it splits a body that arrives in
// pieces into events once, as the WHATWG rules frame them, and hands each to a sink. The stream
// start's check (http/stream_start), the usage reader (telemetry/usage_sniffer) and the id
// tagger (stateful/event_stream_tagger) are its sinks.
//
// Framing: lines end in LF, CRLF or CR (a CRLF may be split between pieces); a line that starts
// with ':' is a comment; `name: value` is a field (one space after the colon dropped; a line
// without a colon is a name with an empty value); an empty line ends the event. An event's data
// is its `data` values joined by LF.
//
// Memory: an event that lies whole in one piece is given as views into that piece; only an
// event that spans pieces is copied (and an event of several data lines has its data joined).
// An event larger than the limit is not held: its bytes go to the sink as they come
// (EventSink::on_bytes), and the next event is read again.
#include <cstddef>
#include <string>
#include <string_view>

namespace smartlb::http {

// One field line of an event.
struct EventField {
  std::string_view name, value;
};
EventField event_field(std::string_view line);

// One line of an event's bytes and the terminator after it ("" for a last line without one).
struct EventLine {
  std::string_view text, terminator;
};
// The line of `raw` (an event's bytes) that starts at `pos`; `pos` moves past it.
EventLine next_event_line(std::string_view raw, std::size_t& pos);

// One event; its views are valid during the sink's call only.
struct SseEvent {
  std::string_view raw;   // its bytes, from its first line through the empty line that ended it
  std::string_view data;  // its data values joined by LF ("" when it has none)
  std::string_view type;  // its last `event` field's value ("" when none)
  unsigned data_lines = 0;
};

class EventSink {
 public:
  virtual void on_event(const SseEvent& event) = 0;
  // Stream bytes that no event given holds: those of an event too large to hold, as they come,
  // and the LF of a CRLF whose CR ended an event already given.
  virtual void on_bytes(std::string_view) {}

 protected:
  ~EventSink() = default;
};

class EventStreamReader {
 public:
  // `event_limit`: an event whose bytes before its closing empty line pass this is not held.
  explicit EventStreamReader(std::size_t event_limit) : limit_(event_limit) {}

  void feed(std::string_view piece, EventSink& sink);
  // The stream ended: an event still open (no empty line after it) is given as it is.
  void finish(EventSink& sink);

  std::size_t held_bytes() const { return held_.size() + joined_.size(); }
  // Heap bytes its texts reserve, held or not.
  std::size_t allocated_bytes() const;
  bool overflowed() const { return overflowed_; }  // an event was over the limit

 private:
  // The line text[begin, end) of the current event, whose bytes start at text[0].
  void on_line(std::string_view text, std::size_t begin, std::size_t end);
  void give(std::string_view raw, EventSink& sink);
  void hold(std::string_view bytes, EventSink& sink);
  void reset_event();

  std::size_t limit_;
  std::string held_;            // the current event's bytes, when it spans pieces
  std::string joined_;          // an event's data of several lines, joined
  std::size_t line_begin_ = 0;  // where the current line starts in held_
  std::size_t data_begin_ = 0;  // the first data value, from the event's first byte
  std::size_t data_size_ = 0;
  std::size_t type_begin_ = 0;  // the last `event` value, likewise
  std::size_t type_size_ = 0;
  unsigned data_lines_ = 0;
  bool line_open_ = false;  // the current line has bytes from an earlier piece
  bool after_cr_ = false;   // the last piece ended in a CR: a LF first in the next is its end
  bool passing_ = false;    // the current event is over the limit: its bytes go as they come
  bool overflowed_ = false;
};

}  // namespace smartlb::http
