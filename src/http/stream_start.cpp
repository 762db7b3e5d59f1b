#include "smartlb/http/stream_start.hpp"

#include <cstring>
#include <string>

namespace smartlb {
namespace {

// The line starting at `pos`: its end (exclusive, before the terminator) and where the next one
// starts. False when no complete line is there yet; a CR as the last byte waits for what follows
// (it may be the first half of CRLF).
bool next_line(std::string_view text, std::size_t pos, std::size_t& end, std::size_t& next) {
  // Two memchr passes (LF, then CR before it: none in most streams) instead of find_first_of,
  // which looks each byte up in the set.
  if (pos >= text.size()) return false;
  const char* const first = text.data() + pos;
  const std::size_t left = text.size() - pos;
  const void* lf = std::memchr(first, '\n', left);
  const std::size_t span = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - first) : left;
  const void* cr = std::memchr(first, '\r', span);
  if (!lf && !cr) return false;
  const std::size_t at = pos + (cr ? static_cast<std::size_t>(static_cast<const char*>(cr) - first) : span);
  if (text[at] == '\r') {
    if (at + 1 == text.size()) return false;
    next = text[at + 1] == '\n' ? at + 2 : at + 1;
  } else {
    next = at + 1;
  }
  end = at;
  return true;
}

struct Field {
  std::string_view name, value;
};

Field split_field(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return {line, line.substr(line.size())};  // empty, at the line's end
  std::string_view value = line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return {line.substr(0, colon), value};
}

}  // namespace

StartVerdict StreamStart::advance(std::string_view held) {
  // Only the first `limit_` bytes are read, so the verdict does not depend on how the bytes
  // were split: an event that completes past the limit is not seen, however it arrived.
  const std::string_view within = held.substr(0, limit_);
  std::size_t end = 0, next = 0;
  while (verdict_ == StartVerdict::Hold && next_line(within, scanned_, end, next)) {
    const std::size_t begin = scanned_;
    scanned_ = next;
    on_line(within, begin, end);
  }
  if (verdict_ == StartVerdict::Hold && held.size() >= limit_)
    decide(StartVerdict::Release, StartReason::Limit);
  return verdict_;
}

void StreamStart::on_line(std::string_view held, std::size_t begin, std::size_t end) {
  if (begin == end) {  // an empty line ends the event
    if (data_lines_ > 0) dispatch(held, begin);
    event_begin_ = scanned_;
    data_lines_ = 0;
    error_event_ = false;
    return;
  }
  if (held[begin] == ':') return;  // a comment
  const Field f = split_field(held.substr(begin, end - begin));
  if (f.name == "event") {
    error_event_ = f.value == "error";
  } else if (f.name == "data") {
    if (data_lines_++ == 0) {
      data_begin_ = static_cast<std::size_t>(f.value.data() - held.data());
      data_end_ = data_begin_ + f.value.size();
    }
  }
}

// The event is held[event_begin_, stop): `stop` is where its closing empty line begins.
void StreamStart::dispatch(std::string_view held, std::size_t stop) {
  std::string joined;  // only for an event of several data lines
  std::string_view data = held.substr(data_begin_, data_end_ - data_begin_);
  if (data_lines_ > 1) {
    // The data lines joined with LF, as an SSE client reads them.
    std::size_t pos = event_begin_, end = 0, next = 0;
    bool first = true;
    while (pos < stop && next_line(held, pos, end, next)) {
      const Field f = split_field(held.substr(pos, end - pos));
      if (held[pos] != ':' && f.name == "data") {
        if (!first) joined.push_back('\n');
        first = false;
        joined.append(f.value);
      }
      pos = next;
    }
    data = joined;
  }
  // One empty data line: an SSE client dispatches nothing, whatever its type (a keep-alive).
  if (data.empty()) return;
  if (error_event_) {
    const StartReason r = classify_stream_error(data);
    decide(r == StartReason::ServerError ? StartVerdict::FailOver : StartVerdict::Release, r);
    return;
  }
  if (data == "[DONE]") {
    decide(StartVerdict::Release, StartReason::Done);
    return;
  }
  switch (const StartReason r = judge_stream_event(data)) {
    case StartReason::None:
      return;  // nothing yet: the next event decides
    case StartReason::ServerError:
      decide(StartVerdict::FailOver, r);
      return;
    default:
      decide(StartVerdict::Release, r);
      return;
  }
}

}  // namespace smartlb
