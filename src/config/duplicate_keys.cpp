#include <algorithm>
#include <set>
#include <utility>

#include "file_reader.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {
namespace {

// Where the copies of a key are: "4 and 7", "4, 7 and 9"; line:column when two share a line
// (JSON on one line).
std::string join_places(const std::vector<YAML::Mark>& at) {
  std::set<int> lines;
  for (const auto& m : at) lines.insert(m.line);
  std::string out;
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (i > 0) out += i + 1 == at.size() ? " and " : ", ";
    out += std::to_string(at[i].line + 1);
    if (lines.size() < at.size()) out.append(":").append(std::to_string(at[i].column + 1));
  }
  return out;
}

// A key given twice in one mapping. yaml-cpp keeps both and `node[key]` finds the first, so an
// edit appended lower in the file would be ignored without a word: an error naming both lines.
// Every mapping is looked at once: an alias shares its anchor's node and mark, so `walked`
// (the marks of the collections seen) also keeps nested aliases from being walked again and again.
void walk_for_duplicates(Reader& r, const std::string& path, const YAML::Node& n, std::set<int>& walked) {
  if (!n.IsMap() && !n.IsSequence()) return;
  if (!walked.insert(n.Mark().pos).second) return;
  if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : n) walk_for_duplicates(r, index_path(path, i++), item, walked);
    return;
  }
  std::vector<std::pair<std::string, std::vector<YAML::Mark>>> keys;  // in the order they first appear
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
    if (it == keys.end()) it = keys.insert(keys.end(), {key, {}});
    it->second.push_back(kv.first.Mark());
    walk_for_duplicates(r, key_path(path, key), kv.second, walked);
  }
  for (const auto& [key, at] : keys)
    if (at.size() > 1)
      r.errors.push_back(
          (path.empty() ? std::string() : path + ": ") + smartlb::config::quoted(key) + " is given " +
          (at.size() == 2 ? std::string("twice") : std::to_string(at.size()) + " times") +
          (path.empty() ? " at the top" : "") + " (lines " + join_places(at) + " of " + r.file() + ")");
}

}  // namespace

void check_duplicate_keys(Reader& r, const YAML::Node& root) {
  std::set<int> walked;
  walk_for_duplicates(r, "", root, walked);
}

}  // namespace smartlb::config::file
