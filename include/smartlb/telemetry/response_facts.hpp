#pragma once
// What an answer says of itself, for its trace's spans (gen_ai.response.*): its `id`, its
// `model` and the `finish_reason` of each of its choices. Read only for a request that is
// traced, from the JSON body or from each event of a stream (telemetry/usage_sniffer), by the
// JSON lexer. Bounded: a long text is not kept, and at most kMaxFinishReasons reasons are.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb::telemetry {

struct ResponseFacts {
  static constexpr std::size_t kMaxText = 256;  // bytes of an id, a model or a reason, decoded
  static constexpr std::size_t kMaxFinishReasons = 16;

  std::string id;
  std::string model;
  std::vector<std::string> finish_reasons;  // in the order they came

  void clear() {
    id.clear();
    model.clear();
    finish_reasons.clear();
  }
};

// Adds what one JSON document says (a response body, or the data of one event) to `facts`:
//   * `id` and `model`: the top-level members, or those of a top-level `response` object (the
//     Responses API's events); kept only while `facts` has none (a stream's first chunk names
//     them; Azure's first, content-filter chunk has them empty, which does not count);
//   * each non-null `finish_reason` of the objects of a top-level `choices` array, appended.
// Nothing is added from a document that is not valid JSON. Strings are decoded; one longer
// than kMaxText is skipped.
void read_response_facts(std::string_view json, ResponseFacts& facts);

}  // namespace smartlb::telemetry
