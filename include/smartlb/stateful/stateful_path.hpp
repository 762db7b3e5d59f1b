#pragma once
// Which requests touch stateful objects: the first collection segment after the API prefix
// (Azure's /openai/..., Azure's v1 /openai/v1/..., OpenAI's /v1/...) names one of the APIs whose
// objects live on the resource that made them (responses, files, batches, ...). Such a request's
// JSON answers get their ids tagged (id_tagger), except the content downloads (a file's bytes
// are the client's own); and the segments of its path that name objects are its ids.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace smartlb::stateful {

enum class ApiPrefix : std::uint8_t {
  None,     // not an API path smartlb knows
  Azure,    // /openai/...?api-version=...
  AzureV1,  // /openai/v1/...
  V1,       // /v1/...
};

struct StatefulPath {
  ApiPrefix prefix = ApiPrefix::None;
  std::string_view collection;  // "responses", "files", ...; empty when the path is not stateful
  bool content = false;         // a content download (.../content): its answer is never rewritten
  std::size_t rest = 0;         // where the segments after the collection start in the path
  bool stateful() const { return !collection.empty(); }
};

StatefulPath classify_path(std::string_view path);

// The segments of a stateful path that name objects (in path order): those in an object's
// place (collection, id, sub-collection, id, ...; fine_tuning's collections are two segments
// deep) that are not one of the API's own words (cancel, content, input_items, runs, ...).
// Calls on_id(segment, offset in path) for each.
template <class OnId>
void for_each_id_segment(std::string_view path, const StatefulPath& where, OnId&& on_id);

// Whether `segment` is one of the words the stateful APIs use in their paths (never an id).
bool is_api_word(std::string_view segment);

// ---- inline ----

template <class OnId>
void for_each_id_segment(std::string_view path, const StatefulPath& where, OnId&& on_id) {
  if (!where.stateful()) return;
  std::size_t at = where.rest;
  // fine_tuning/jobs/{id}, fine_tuning/checkpoints/{id}: the collection is two segments.
  std::size_t index = where.collection == "fine_tuning" ? 0 : 1;
  while (at < path.size()) {
    std::size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(at, end - at);
    if (index % 2 == 1 && !segment.empty() && !is_api_word(segment)) on_id(segment, at);
    ++index;
    at = end + 1;
  }
}

}  // namespace smartlb::stateful
