#include "smartlb/stateful/request_ids.hpp"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "json_id_walk.hpp"
#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::stateful {
namespace {

using detail::JsonIdWalk;
using detail::JsonToken;

PinRank rank_of(std::string_view key, std::string_view container_key) {
  if (key == "previous_response_id") return PinRank::PreviousResponse;
  if (key == "conversation" || (key == "id" && container_key == "conversation")) return PinRank::Conversation;
  return PinRank::Body;
}

}  // namespace

void RequestIds::order() {
  const auto by_rank = [](const FoundId& a, const FoundId& b) { return a.rank < b.rank; };
  std::stable_sort(tagged_.begin(), tagged_.end(), by_rank);
  std::stable_sort(untagged_.begin(), untagged_.end(), by_rank);
}

namespace {

// 16 positions at a time: where "-", "s", "l", "b" start at once. Its cost does not depend on
// the text.
bool vector_scan_for_tag(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
#if defined(__SSE2__)
  const auto at = [](const char* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  const auto is = [](__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
  while (end - p >= 16 + 3) {  // the 16 starting positions and the 3 bytes after the last
    const __m128i starts = _mm_and_si128(_mm_and_si128(is(at(p), '-'), is(at(p + 1), 's')),
                                         _mm_and_si128(is(at(p + 2), 'l'), is(at(p + 3), 'b')));
    if (_mm_movemask_epi8(starts) != 0) return true;
    p += 16;
  }
#endif
  return std::string_view(p, static_cast<std::size_t>(end - p)).find(kTagMark) != std::string_view::npos;
}

}  // namespace

// Every request body is looked at (a chat request may name a tagged file). memchr (glibc's moves
// 32 bytes a step) to each '-' and a look at what follows is the fastest while hyphens are few,
// the usual case (2.6 times faster than the vector scan on the benchmark's chat body); after
// kHyphensBeforeScan of them (prose with dates, UUIDs), the vector scan takes the rest, so text
// made of hyphens costs no more than it.
bool may_hold_tag(std::string_view text) {
  constexpr int kHyphensBeforeScan = 8;
  std::size_t from = 0;
  for (int hyphens = 0; hyphens < kHyphensBeforeScan; ++hyphens) {
    const std::size_t at = text.find('-', from);
    if (at == std::string_view::npos) return false;
    if (text.compare(at, kTagMark.size(), kTagMark) == 0) return true;
    from = at + 1;
  }
  return vector_scan_for_tag(text.substr(from));
}

void strip_path(std::string_view path, const StatefulPath& where, std::string& out, RequestIds& ids) {
  if (may_hold_tag(path)) {
    std::size_t at = 0;
    while (at <= path.size()) {
      std::size_t end = path.find('/', at);
      if (end == std::string_view::npos) end = path.size();
      std::string_view segment = path.substr(at, end - at);
      if (const auto bits = trailing_tag(segment)) {
        segment.remove_suffix(kTagSize);
        ids.add_tagged(PinRank::Path, segment, *bits);
      }
      out.append(segment);
      if (end < path.size()) out.push_back('/');
      at = end + 1;
    }
  } else {
    out.append(path);
  }
  for_each_id_segment(path, where, [&](std::string_view segment, std::size_t) {
    if (taggable(segment)) ids.add_untagged(PinRank::Path, segment);
  });
}

void strip_query(std::string_view query, std::string& out, RequestIds& ids) {
  if (!may_hold_tag(query)) {
    out.append(query);
    return;
  }
  std::size_t at = 0;
  while (at <= query.size()) {
    std::size_t end = query.find('&', at);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(at, end - at);
    const std::size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    if (eq != std::string_view::npos && (name == "after" || name == "before"))
      if (const auto bits = trailing_tag(pair.substr(eq + 1))) {
        pair.remove_suffix(kTagSize);
        ids.add_tagged(PinRank::Path, pair.substr(eq + 1), *bits);
      }
    out.append(pair);
    if (end < query.size()) out.push_back('&');
    at = end + 1;
  }
}

bool strip_json_body(std::string_view body, std::string& out, RequestIds& ids) {
  const std::size_t start = out.size();
  const RequestIds::Mark mark = ids.mark();
  JsonIdWalk walk(body);
  std::size_t copied = 0;  // bytes of `body` already in `out`
  for (;;) {
    switch (walk.next()) {
      case http::JsonToken::String: {
        const std::string_view raw = walk.lexer().raw();
        if (const auto bits = trailing_tag(raw)) {
          const std::size_t tag_at = walk.lexer().end() - 1 - kTagSize;
          out.append(body.substr(copied, tag_at - copied));
          copied = tag_at + kTagSize;
          ids.add_tagged(rank_of(walk.key(), walk.container_key()), raw.substr(0, raw.size() - kTagSize),
                         *bits);
        } else if (walk.is_id() && taggable(raw)) {
          ids.add_untagged(rank_of(walk.key(), walk.container_key()), raw);
        }
        break;
      }
      case http::JsonToken::End:
        out.append(body.substr(copied));
        return true;
      case http::JsonToken::Invalid:
        out.resize(start);
        ids.rewind(mark);
        return false;
      default:
        break;
    }
  }
}

}  // namespace smartlb::stateful
