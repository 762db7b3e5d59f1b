#include "smartlb/stateful/event_stream_tagger.hpp"

#include <vector>

#include "smartlb/stateful/id_tagger.hpp"

namespace smartlb::stateful {
namespace {

// One line of an event: its text and the terminator after it ("" for a last line without one).
struct Line {
  std::string_view text;
  std::string_view terminator;
};

// The next line of `event` from `at` (CRLF, LF or CR ends it).
Line next_line(std::string_view event, std::size_t& at) {
  const std::size_t begin = at;
  std::size_t i = begin;
  while (i < event.size() && event[i] != '\n' && event[i] != '\r') ++i;
  Line line{event.substr(begin, i - begin), {}};
  std::size_t end = i;
  if (i < event.size())
    end = event[i] == '\r' && i + 1 < event.size() && event[i + 1] == '\n' ? i + 2 : i + 1;
  line.terminator = event.substr(i, end - i);
  at = end;
  return line;
}

// Where a data line's value starts: after "data:" and one optional space.
std::size_t data_value_offset(std::string_view line) { return line.size() > 5 && line[5] == ' ' ? 6 : 5; }

}  // namespace

void EventStreamTagger::put(std::string_view bytes, std::string& out) {
  if (!passing_ && event_.size() + bytes.size() > limit_) {
    // Too large to hold: what is held and the rest of this event go out as they are.
    passing_ = overflowed_ = true;
    out.append(event_);
    std::string().swap(event_);
  }
  (passing_ ? out : event_).append(bytes);
}

void EventStreamTagger::feed(std::string_view in, std::string& out) {
  std::size_t i = 0;
  const std::size_t n = in.size();
  if (after_cr_ && n > 0) {
    after_cr_ = false;
    if (in[0] == '\n') {  // the second half of a CRLF split between reads
      if (lf_to_out_)
        out.push_back('\n');
      else
        put("\n", out);
      i = 1;
    }
    lf_to_out_ = false;
  }
  while (i < n) {
    std::size_t j = i;
    while (j < n && in[j] != '\n' && in[j] != '\r') ++j;
    put(in.substr(i, j - i), out);
    line_bytes_ += j - i;
    if (j == n) return;  // the line goes on in the next read
    std::size_t end = j + 1;
    if (in[j] == '\r') {
      if (j + 1 < n) {
        if (in[j + 1] == '\n') end = j + 2;
      } else {
        after_cr_ = true;
      }
    }
    const bool blank = line_bytes_ == 0;
    line_bytes_ = 0;
    // The blank line's terminator is not counted against the limit: a CRLF split between reads
    // would otherwise end the event at the CR in one case and overflow at the LF in the other.
    if (blank && !passing_)
      event_.append(in.substr(j, end - j));
    else
      put(in.substr(j, end - j), out);
    i = end;
    if (blank) {
      lf_to_out_ = after_cr_;
      end_event(out);
    }
  }
}

void EventStreamTagger::finish(std::string& out) {
  if (!passing_ && !event_.empty()) write_event(event_, out);
  event_.clear();
  passing_ = after_cr_ = lf_to_out_ = false;
  line_bytes_ = 0;
}

void EventStreamTagger::end_event(std::string& out) {
  if (passing_) {
    passing_ = false;  // its bytes went out already
    return;
  }
  write_event(event_, out);
  event_.clear();
}

void EventStreamTagger::write_event(std::string_view event, std::string& out) const {
  // The data lines' values, joined by LF, are the event's data (the SSE rule). A LF cannot be
  // inside a JSON string, so the tagged data splits back into the same lines.
  std::vector<Line> lines;
  std::size_t data_lines = 0;
  for (std::size_t at = 0; at < event.size();) {
    lines.push_back(next_line(event, at));
    if (lines.back().text.starts_with("data:")) ++data_lines;
  }
  if (data_lines == 0) {
    out.append(event);
    return;
  }
  std::string data;
  bool first = true;
  for (const Line& l : lines) {
    if (!l.text.starts_with("data:")) continue;
    if (!first) data.push_back('\n');
    first = false;
    data.append(l.text.substr(data_value_offset(l.text)));
  }
  std::string tagged;
  if (!tag_json_ids(data, tag_, tagged) || tagged.size() == data.size()) {
    out.append(event);  // not JSON ([DONE]), or nothing in it to tag
    return;
  }
  std::size_t from = 0;  // where the next data line's value starts in `tagged`
  for (const Line& l : lines) {
    if (!l.text.starts_with("data:")) {
      out.append(l.text).append(l.terminator);
      continue;
    }
    std::size_t to = tagged.find('\n', from);
    if (to == std::string::npos) to = tagged.size();
    out.append(l.text.substr(0, data_value_offset(l.text)));
    out.append(std::string_view(tagged).substr(from, to - from));
    out.append(l.terminator);
    from = to + 1;
  }
}

}  // namespace smartlb::stateful
