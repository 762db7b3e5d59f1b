#pragma once
// What a request says about where its objects live, and the request as the backend must see
// it: every path segment, `after` / `before` query value and JSON string value of the body that
// ends in a tag (resource_tag) loses it, and the tags found are kept in pin order -- the path
// (and its query) first, then `previous_response_id`, then `conversation`, then the body in
// order. Ids where ids stand (id segments of a stateful path, id members of the body as
// id_tagger reads them) that carry no tag are kept too: an untagged request is placed by them.
//
// Whether a tag names a configured resource, and what a request whose tags name two of them
// is, the caller decides (it knows the configuration).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/stateful/stateful_path.hpp"

namespace smartlb::stateful {

// Which part of a request an id came from; lower pins first.
enum class PinRank : std::uint8_t { Path = 0, PreviousResponse = 1, Conversation = 2, Body = 3 };

struct FoundId {
  PinRank rank = PinRank::Body;
  std::string_view id;     // without its tag: a view into the request's bytes
  std::uint64_t bits = 0;  // the tag's (a tagged id only)
};

class RequestIds {
 public:
  // At most this many of each kind are kept (a body may hold thousands of item ids).
  static constexpr std::size_t kMaxKept = 64;

  // Tagged ids, in pin order (after order()).
  std::span<const FoundId> tagged() const { return tagged_; }
  // Untagged ids where ids stand, in the same order.
  std::span<const FoundId> untagged() const { return untagged_; }
  // Puts both in pin order: by rank, then in the order they were found.
  void order();
  void clear() {
    tagged_.clear();
    untagged_.clear();
  }

  void add_tagged(PinRank rank, std::string_view id, std::uint64_t bits) {
    if (tagged_.size() < kMaxKept) tagged_.push_back({rank, id, bits});
  }
  void add_untagged(PinRank rank, std::string_view id) {
    if (untagged_.size() < kMaxKept) untagged_.push_back({rank, id, 0});
  }
  // Drops what was added after the sizes in `mark` (a body found invalid half-way).
  struct Mark {
    std::size_t tagged, untagged;
  };
  Mark mark() const { return {tagged_.size(), untagged_.size()}; }
  void rewind(Mark m) {
    tagged_.resize(m.tagged);
    untagged_.resize(m.untagged);
  }

 private:
  std::vector<FoundId> tagged_;
  std::vector<FoundId> untagged_;
};

// `path` with every segment's tag removed, appended to `out`. Tags are kept with rank Path; the
// untagged id segments of a stateful path (`where`) too.
void strip_path(std::string_view path, const StatefulPath& where, std::string& out, RequestIds& ids);

// `query` with the tags of its `after` and `before` values removed (a list's next page stays on
// the resource of the page before), appended to `out`; those tags kept with rank Path.
void strip_query(std::string_view query, std::string& out, RequestIds& ids);

// A JSON body with every string value's tag removed, appended to `out`, the tags kept by rank
// (the value of previous_response_id: PreviousResponse; of conversation, or its object's id:
// Conversation; any other: Body), and the untagged ids where ids stand. False when `body` is
// not valid JSON: then `out` and `ids` are as they were.
bool strip_json_body(std::string_view body, std::string& out, RequestIds& ids);

// Whether any byte sequence of `text` looks like the start of a tag ("-slb"): a body without one
// needs no stripping.
bool may_hold_tag(std::string_view text);

}  // namespace smartlb::stateful
