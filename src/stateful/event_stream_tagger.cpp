#include "smartlb/stateful/event_stream_tagger.hpp"

#include "smartlb/stateful/id_tagger.hpp"

namespace smartlb::stateful {

void EventStreamTagger::feed(std::string_view in, std::string& out, http::EventSink* also) {
  out_ = &out;
  also_ = also;
  reader_.feed(in, *this);
  out_ = nullptr;
  also_ = nullptr;
}

void EventStreamTagger::finish(std::string& out, http::EventSink* also) {
  out_ = &out;
  also_ = also;
  reader_.finish(*this);
  out_ = nullptr;
  also_ = nullptr;
}

void EventStreamTagger::on_event(const http::SseEvent& event) {
  std::string& out = *out_;
  std::string tagged;
  if (event.data_lines == 0 || !tag_json_ids(event.data, tag_, tagged) ||
      tagged.size() == event.data.size()) {
    out.append(event.raw);  // no data, not JSON ([DONE]), or nothing in it to tag
    if (also_) also_->on_event(event);
    return;
  }
  const std::size_t begin = out.size();
  // The data values were joined by LF, and a LF cannot be inside a JSON string, so the tagged
  // data splits back into the same lines.
  std::size_t from = 0;  // where the next data line's value starts in `tagged`
  for (std::size_t pos = 0; pos < event.raw.size();) {
    const http::EventLine line = http::next_event_line(event.raw, pos);
    const http::EventField field = http::event_field(line.text);
    if (line.text.empty() || line.text.front() == ':' || field.name != "data") {
      out.append(line.text).append(line.terminator);
      continue;
    }
    std::size_t to = tagged.find('\n', from);
    if (to == std::string::npos) to = tagged.size();
    out.append(line.text.substr(0, static_cast<std::size_t>(field.value.data() - line.text.data())));
    out.append(std::string_view(tagged).substr(from, to - from));
    out.append(line.terminator);
    from = to + 1;
  }
  // Who else reads the stream sees the event as the client does, its ids tagged.
  if (also_) also_->on_event({std::string_view(out).substr(begin), tagged, event.type, event.data_lines});
}

}  // namespace smartlb::stateful
