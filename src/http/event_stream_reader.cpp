#include "smartlb/http/event_stream_reader.hpp"

#include <cstring>

namespace smartlb::http {
namespace {

constexpr std::size_t npos = std::string_view::npos;

// Where the line that starts at `pos` ends (its terminator's first byte), or npos when `text`
// holds no terminator after it. Two memchr passes (LF, then a CR before it: none in most
// streams) instead of find_first_of, which looks each byte up in the set.
std::size_t line_end(std::string_view text, std::size_t pos) {
  const char* const first = text.data() + pos;
  const std::size_t left = text.size() - pos;
  const void* lf = std::memchr(first, '\n', left);
  const std::size_t span = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - first) : left;
  if (const void* cr = std::memchr(first, '\r', span))
    return pos + static_cast<std::size_t>(static_cast<const char*>(cr) - first);
  return lf ? pos + span : npos;
}

// Where the line whose terminator starts at `at` is followed by the next one.
std::size_t after_terminator(std::string_view text, std::size_t at) {
  if (at >= text.size()) return text.size();
  return text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n' ? at + 2 : at + 1;
}

}  // namespace

EventField event_field(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == npos) return {line, line.substr(line.size())};  // empty, at the line's end
  std::string_view value = line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return {line.substr(0, colon), value};
}

EventLine next_event_line(std::string_view raw, std::size_t& pos) {
  std::size_t at = line_end(raw, pos);
  if (at == npos) at = raw.size();
  const std::size_t next = after_terminator(raw, at);
  const EventLine line{raw.substr(pos, at - pos), raw.substr(at, next - at)};
  pos = next;
  return line;
}

std::size_t EventStreamReader::allocated_bytes() const {
  std::size_t n = 0;
  for (const std::string* t : {&held_, &joined_})
    if (t->capacity() > std::string().capacity()) n += t->capacity();
  return n;
}

void EventStreamReader::reset_event() {
  data_lines_ = 0;
  data_begin_ = data_size_ = type_begin_ = type_size_ = 0;
}

void EventStreamReader::on_line(std::string_view text, std::size_t begin, std::size_t end) {
  if (text[begin] == ':') return;  // a comment
  const EventField f = event_field(text.substr(begin, end - begin));
  const auto offset = static_cast<std::size_t>(f.value.data() - text.data());
  if (f.name == "data") {
    if (data_lines_++ == 0) {
      data_begin_ = offset;
      data_size_ = f.value.size();
    }
  } else if (f.name == "event") {
    type_begin_ = offset;
    type_size_ = f.value.size();
  }
}

void EventStreamReader::give(std::string_view raw, EventSink& sink) {
  SseEvent e{raw, {}, raw.substr(type_begin_, type_size_), data_lines_};
  if (data_lines_ == 1) {
    e.data = raw.substr(data_begin_, data_size_);
  } else if (data_lines_ > 1) {
    joined_.clear();
    bool first = true;
    for (std::size_t pos = 0; pos < raw.size();) {
      const std::string_view line = next_event_line(raw, pos).text;
      if (line.empty() || line.front() == ':') continue;
      const EventField f = event_field(line);
      if (f.name != "data") continue;
      if (!first) joined_.push_back('\n');
      first = false;
      joined_.append(f.value);
    }
    e.data = joined_;
  }
  sink.on_event(e);
  std::string().swap(joined_);  // several data lines are rare: no copy is kept between events
  reset_event();
}

void EventStreamReader::hold(std::string_view bytes, EventSink& sink) {
  if (!passing_ && held_.size() + bytes.size() > limit_) {
    // Too large to hold: what is held and the rest of this event go on as they are.
    passing_ = overflowed_ = true;
    sink.on_bytes(held_);
    std::string().swap(held_);
  }
  if (passing_)
    sink.on_bytes(bytes);
  else
    held_.append(bytes);
}

void EventStreamReader::feed(std::string_view piece, EventSink& sink) {
  const std::size_t n = piece.size();
  std::size_t pos = 0;
  if (after_cr_ && n > 0) {
    after_cr_ = false;
    if (piece.front() == '\n') {  // the second half of a CRLF split between pieces
      if (!passing_ && !held_.empty()) {
        hold(piece.substr(0, 1), sink);  // counted, as it would be had the CRLF come whole
        line_begin_ = held_.size();
      } else {
        sink.on_bytes(piece.substr(0, 1));
      }
      pos = 1;
    }
  }
  bool holding = passing_ || !held_.empty();  // the current event began in an earlier piece
  std::size_t start = pos;                    // ... else its first byte here
  while (pos < n) {
    const std::size_t at = line_end(piece, pos);
    if (at == npos) break;  // the line goes on in the next piece
    std::size_t next = at + 1;
    if (piece[at] == '\r') {
      if (next == n)
        after_cr_ = true;
      else if (piece[next] == '\n')
        ++next;
    }
    const bool blank = at == pos && !line_open_;
    const std::size_t begin = pos;
    const std::string_view line = piece.substr(begin, next - begin);
    line_open_ = false;
    pos = next;
    if (!holding) {
      if (!blank) {
        on_line(piece.substr(start), begin - start, at - start);
        continue;
      }
      const std::string_view raw = piece.substr(start, next - start);
      if (at - start > limit_) {
        overflowed_ = true;
        sink.on_bytes(raw);
        reset_event();
      } else {
        give(raw, sink);
      }
      start = next;
      continue;
    }
    if (passing_) {
      sink.on_bytes(line);
      if (blank) passing_ = false;
    } else if (blank) {
      held_.append(line);  // the closing line is not counted against the limit
      give(held_, sink);
      std::string().swap(held_);
    } else {
      hold(line, sink);
      if (!passing_) on_line(held_, line_begin_, held_.size() - (next - at));
      line_begin_ = held_.size();
    }
    if (blank) {
      reset_event();
      line_begin_ = 0;
      holding = false;
      start = next;
    }
  }
  if (holding) {
    if (pos < n) {
      hold(piece.substr(pos), sink);
      line_open_ = true;
    }
  } else if (start < n) {  // an event that goes on in the next piece
    hold(piece.substr(start), sink);
    line_begin_ = pos - start;
    line_open_ = pos < n;
  }
}

void EventStreamReader::finish(EventSink& sink) {
  after_cr_ = false;
  if (!passing_ && !held_.empty()) {
    if (line_open_) on_line(held_, line_begin_, held_.size());
    give(held_, sink);
  }
  std::string().swap(held_);
  passing_ = line_open_ = false;
  line_begin_ = 0;
  reset_event();
}

}  // namespace smartlb::http
