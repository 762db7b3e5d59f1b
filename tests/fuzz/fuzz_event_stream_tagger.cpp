// stateful/event_stream_tagger on any bytes. Input: one byte choosing the read size and the
// event limit, then the stream. Invariants: the output is the same however the stream is cut
// into reads; no more than the limit is ever held; a stream without a data line comes out as it
// went in; taking the tags off the output gives the stream with its tags taken off (no byte is
// lost, moved or invented).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/stateful/event_stream_tagger.hpp"
#include "smartlb/stateful/resource_tag.hpp"

namespace {

using namespace smartlb::stateful;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::string run(std::string_view stream, std::size_t step, std::size_t limit, const ResourceTag& tag) {
  EventStreamTagger tagger(tag, limit);
  std::string out;
  for (std::size_t at = 0; at < stream.size(); at += step) {
    tagger.feed(stream.substr(at, step), out);
    check(tagger.held_bytes() <= limit);
  }
  tagger.finish(out);
  check(tagger.held_bytes() == 0);
  return out;
}

// Every occurrence of the tag taken out.
std::string without(std::string s, std::string_view tag) {
  for (std::size_t at = s.find(tag); at != std::string::npos; at = s.find(tag, at)) s.erase(at, tag.size());
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t opt = data[0];
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  const ResourceTag tag = tag_from_bits(0x1234567);
  const std::size_t limit = (opt & 0x80) ? 1u << 20 : 16u + (opt & 0x3f) * 4u;
  const std::size_t step = 1 + (opt & 0x0f);

  const std::string whole = run(stream, stream.size() + 1, limit, tag);
  check(run(stream, step, limit, tag) == whole);
  if (stream.find("data:") == std::string_view::npos) check(whole == stream);
  check(without(whole, tag.view()) == without(std::string(stream), tag.view()));
  return 0;
}
