// stateful/stateful_path and request_ids' path and query on any bytes. Input: a request-target
// ("path?query"). Invariants: id segments lie inside the path at their offsets; stripping
// takes exactly the tags off (a target without the mark is copied as it is, and one whose every
// segment and after/before value got a tag comes back as it was); every id kept is a view into
// the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/stateful/request_ids.hpp"
#include "smartlb/stateful/resource_tag.hpp"
#include "smartlb/stateful/stateful_path.hpp"

namespace {

using namespace smartlb::stateful;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool inside(std::string_view whole, std::string_view part) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

// `text` split at `sep`, `tag` appended to every piece that `pick` chooses.
template <class Pick>
std::string tag_pieces(std::string_view text, char sep, std::string_view tag, Pick pick) {
  std::string out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(sep, at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view piece = text.substr(at, end - at);
    out.append(piece);
    if (pick(piece)) out.append(tag);
    if (end < text.size()) out.push_back(sep);
    at = end + 1;
  }
  return out;
}

void check_ids(std::string_view input, const RequestIds& ids) {
  for (const FoundId& f : ids.tagged()) check(inside(input, f.id));
  for (const FoundId& f : ids.untagged()) check(inside(input, f.id));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  const StatefulPath where = classify_path(path);
  check(where.rest <= path.size());
  for_each_id_segment(path, where, [&](std::string_view segment, std::size_t offset) {
    check(offset + segment.size() <= path.size() && path.substr(offset, segment.size()) == segment);
    check(!segment.empty() && segment.find('/') == std::string_view::npos);
  });

  std::string out;
  RequestIds ids;
  strip_path(path, where, out, ids);
  check_ids(path, ids);
  check(out.size() == path.size() - kTagSize * ids.tagged().size() ||
        ids.tagged().size() == RequestIds::kMaxKept);
  std::string qout;
  RequestIds qids;
  strip_query(query, qout, qids);
  check_ids(query, qids);
  if (!may_hold_tag(path)) check(out == path);
  if (!may_hold_tag(query)) check(qout == query);

  if (!may_hold_tag(target)) {
    const ResourceTag tag = tag_from_bits(size);
    const std::string tagged_path =
        tag_pieces(path, '/', tag.view(), [](std::string_view s) { return !s.empty(); });
    std::string back;
    RequestIds tids;
    strip_path(tagged_path, classify_path(tagged_path), back, tids);
    check(back == path);
    for (const FoundId& f : tids.tagged()) check(f.bits == tag.bits);
    const std::string tagged_query = tag_pieces(query, '&', tag.view(), [](std::string_view s) {
      return (s.starts_with("after=") && s.size() > 6) || (s.starts_with("before=") && s.size() > 7);
    });
    std::string qback;
    strip_query(tagged_query, qback, tids);
    check(qback == query);
  }
  return 0;
}
