// The stateful module's JSON readers (stateful/id_tagger, request_ids' body, not_found) on any
// bytes. Invariants: tagging succeeds exactly when stripping does, and leaves `out` as it was
// when not; strip(tag(x)) == strip(x) and tag(tag(x)) == tag(x) (a tag is added once and taken
// off whole); what nlohmann accepts is accepted (nesting within the lexer's depth); and for a
// body without escapes, the tagged body is nlohmann's DOM with exactly the id strings tagged.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "smartlb/stateful/id_tagger.hpp"
#include "smartlb/stateful/not_found.hpp"
#include "smartlb/stateful/request_ids.hpp"
#include "smartlb/stateful/resource_tag.hpp"

namespace {

using namespace smartlb::stateful;
using nlohmann::json;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::size_t depth_of(const json& j) {
  std::size_t inner = 0;
  if (j.is_structured()) {
    for (const auto& v : j) inner = std::max(inner, depth_of(v));
    return inner + 1;
  }
  return 0;
}

bool id_key(const std::string& k) {
  return k == "id" || k.ends_with("_id") || k == "conversation" || k == "training_file" ||
         k == "validation_file";
}
bool id_list_key(const std::string& k) { return k.ends_with("_ids") || k == "result_files"; }

void tag_string(json& v, const ResourceTag& tag) {
  if (v.is_string() && taggable(v.get<std::string>())) v = v.get<std::string>() + std::string(tag.view());
}

// The tagger's rule, on a DOM.
void tag_dom(json& j, const ResourceTag& tag) {
  if (j.is_array()) {
    for (auto& v : j) tag_dom(v, tag);
  } else if (j.is_object()) {
    for (auto& [key, v] : j.items()) {
      if (key == "metadata" && v.is_object()) continue;
      if (id_key(key)) tag_string(v, tag);
      if (id_list_key(key) && v.is_array())
        for (auto& e : v) tag_string(e, tag);
      tag_dom(v, tag);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const ResourceTag tag = tag_from_bits(size * 0x9e3779b97f4a7c15ull);

  std::string tagged = "x";
  const bool valid = tag_json_ids(body, tag, tagged);
  if (!valid) {
    check(tagged == "x");
  } else {
    check(tagged.starts_with("x"));
    tagged.erase(0, 1);
  }

  std::string stripped;
  RequestIds ids;
  check(strip_json_body(body, stripped, ids) == valid);
  (void)says_not_found(400, body);

  // nlohmann reads up to a NUL byte and skips a byte-order mark; the lexer does neither.
  const bool plain = body.find('\0') == std::string_view::npos && !body.starts_with("\xEF\xBB\xBF");
  const json dom = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (plain && !dom.is_discarded() && depth_of(dom) <= 1024) check(valid);
  if (!valid) return 0;

  std::string stripped_tagged;
  RequestIds ids2;
  check(strip_json_body(tagged, stripped_tagged, ids2));
  check(stripped_tagged == stripped);
  std::string twice;
  check(tag_json_ids(tagged, tag, twice));
  check(twice == tagged);

  if (plain && body.find('\\') == std::string_view::npos && !dom.is_discarded()) {
    json want = dom;
    tag_dom(want, tag);
    const json got = json::parse(tagged, nullptr, false);
    check(!got.is_discarded() && got == want);
  }
  return 0;
}
