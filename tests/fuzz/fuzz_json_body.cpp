// top_level_string / top_level_strings / edit_json_body (http/json_body), against nlohmann::json.
// Input: one byte choosing the edits, then a body. Invariants: every view returned lies inside
// the body; the lexer accepts exactly what nlohmann accepts as an object (except what
// http/json_lexer.hpp documents: nlohmann ends its input at a NUL byte, so it also takes what
// follows one); when both accept, top_level_string agrees with the DOM and the edited body
// parses as the DOM with the edits applied.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/http/json_body.hpp"

namespace {

using namespace smartlb;
using nlohmann::json;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool inside(std::string_view body, std::string_view v) {
  return v.data() >= body.data() && v.data() + v.size() <= body.data() + body.size();
}

std::vector<http::BodyEdit> edits_for(std::uint8_t opt) {
  static const char* const kKeys[] = {"model", "a", "", "x\"y", "caf\xC3\xA9", "user", "n", "b"};
  static const char* const kValues[] = {"\"m\"", "1",      "null",    "[1,{\"k\":\"v\"}]",
                                        "{}",    "-2.5e3", "\"\\n\"", "true"};
  std::vector<http::BodyEdit> edits;
  // Up to three edits: key (3 bits) of each from the option byte, value or removal alternating.
  for (int k = 0; k < 1 + (opt >> 6); ++k) {
    const int key = (opt >> (2 * k)) & 7;
    if ((opt >> k) & 1) {
      edits.push_back({kKeys[key], std::string(kValues[(opt + k) & 7])});
    } else {
      edits.push_back({kKeys[key], std::nullopt});
    }
  }
  return edits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<http::BodyEdit> edits = edits_for(data[0]);

  const std::string_view keys[] = {"model", "a", "", "user"};
  std::optional<std::string_view> found[4];
  const bool ours = http::top_level_strings(body, keys, found);
  for (const auto& f : found) check(!f || inside(body, *f));
  const auto single = http::top_level_string(body, "model");
  check(single == found[0]);
  check(!single || inside(body, *single));
  const std::optional<std::string> edited = edit_json_body(body, edits);
  check(edited.has_value() == ours);

  json dom;
  bool theirs = false;
  try {
    dom = json::parse(body);
    theirs = dom.is_object();
  } catch (const json::exception&) {  // parse_error, or out_of_range for a number overflow
  }
  check(!ours || theirs);
  if (!ours) {
    const bool nul = body.find('\0') != std::string_view::npos;  // nlohmann's input ends at one
    check(!theirs || nul);
    return 0;
  }

  // Both accept: the strings agree with the DOM, and the edit with a merge on it.
  for (std::size_t i = 0; i < std::size(keys); ++i) {
    const std::string key(keys[i]);
    const bool is_string = dom.contains(key) && dom[key].is_string();
    check(found[i].has_value() == is_string);
    if (is_string) check(json::parse("\"" + std::string(*found[i]) + "\"") == dom[key]);
  }
  json expected = dom;
  std::vector<std::string> seen;
  for (const http::BodyEdit& e : edits) {
    if (std::find(seen.begin(), seen.end(), e.key) != seen.end()) continue;  // the first counts
    seen.push_back(e.key);
    if (e.json_value) {
      expected[e.key] = json::parse(*e.json_value);
    } else {
      expected.erase(e.key);
    }
  }
  json out;
  try {
    out = json::parse(*edited);
  } catch (const json::parse_error&) {
    __builtin_trap();
  }
  check(out == expected);
  if (edits.empty() ||
      std::none_of(edits.begin(), edits.end(), [](const http::BodyEdit& e) { return e.json_value; })) {
    check(edited->size() <= body.size());
  }
  return 0;
}
