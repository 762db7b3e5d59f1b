// The config file's `priority_classes` (highest first) and its clients' `priority_class`
// (docs/client-budgets.md, "Priority classes").
#include <algorithm>
#include <set>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config {

std::vector<PriorityClassConfig> default_priority_classes() {
  return {PriorityClassConfig{"interactive", 0, {}, {}},
          PriorityClassConfig{"batch", kDefaultClassReserve, {}, {}}};
}

}  // namespace smartlb::config

namespace smartlb::config::file {
namespace {

// One entry; false when it is not usable.
bool read_class(Reader& r, const std::string& path, const YAML::Node& n, bool first, PriorityClassConfig& c) {
  if (!r.is_map(path, n)) return false;
  r.check_keys(path, n, kPriorityClassKeys);
  bool ok = true;
  if (const auto v = n["name"]; !v) {
    r.error(key_path(path, "name"), n, "is required (interactive, batch, ...)");
    ok = false;
  } else if (auto s = r.name(key_path(path, "name"), v)) {
    c.name = *s;
  } else {
    ok = false;
  }
  if (const auto v = n["reserve_percent"]) {
    if (first) {
      r.error(key_path(path, "reserve_percent"), v,
              "cannot be set on the first class: no class is above it to keep a reserve for");
      ok = false;
    } else if (auto x = r.number(key_path(path, "reserve_percent"), v, 0, 99, "a percentage from 0 to 99")) {
      c.reserve_permille = static_cast<std::uint16_t>(*x * 10 + 0.5);
    } else {
      ok = false;
    }
  } else if (!first) {
    c.reserve_permille = kDefaultClassReserve;
  }
  c.subjects = r.strings(key_path(path, "subjects"), n["subjects"]);
  if (const auto v = n["max_queue_seconds"]) {
    if (auto x =
            r.number(key_path(path, "max_queue_seconds"), v, 0, 3600, "a number of seconds from 0 to 3600"))
      c.max_queue = std::chrono::milliseconds(static_cast<std::int64_t>(*x * 1000 + 0.5));
    else
      ok = false;
  }
  if (const auto v = n["max_queue_length"]) {
    if (auto x =
            r.integer(key_path(path, "max_queue_length"), v, 1, 1'000'000, "an integer from 1 to 1000000"))
      c.max_queue_length = static_cast<std::uint32_t>(*x);
    else
      ok = false;
  }
  return ok;
}

}  // namespace

void read_priority_classes(Reader& r, const YAML::Node& root, Config& cfg) {
  const YAML::Node list = root["priority_classes"];
  std::vector<PriorityClassConfig> classes;
  if (r.is_list("priority_classes", list) && list) {
    if (list.size() > kMaxPriorityClasses)
      r.error("priority_classes", list,
              "has " + std::to_string(list.size()) + " classes; at most " +
                  std::to_string(kMaxPriorityClasses) + " are allowed");
    std::set<std::string> names;
    for (std::size_t i = 0; i < list.size() && i < kMaxPriorityClasses; ++i) {
      const std::string path = index_path("priority_classes", i);
      PriorityClassConfig c;
      if (!read_class(r, path, list[i], i == 0, c)) continue;
      if (!names.insert(c.name).second) {
        r.error(key_path(path, "name"), list[i]["name"],
                "duplicates another class's name " + smartlb::config::quoted(c.name));
        continue;
      }
      if (!classes.empty() && c.reserve_permille < classes.back().reserve_permille)
        r.warn(
            key_path(path, "reserve_percent"),
            list[i]["reserve_percent"] ? list[i]["reserve_percent"] : list[i],
            "is lower than the class above it keeps: requests of this class may take what that one may not");
      classes.push_back(std::move(c));
    }
  }
  if (classes.empty()) classes = default_priority_classes();
  // A client entry's class: it must name one.
  const YAML::Node clients = root["clients"];
  for (std::size_t i = 0; clients && clients.IsSequence() && i < clients.size(); ++i) {
    const YAML::Node v = clients[i].IsMap() ? clients[i]["priority_class"] : YAML::Node();
    if (!v) continue;
    const std::string path = key_path(index_path("clients", i), "priority_class");
    const auto name = r.string(path, v);
    const auto client = clients[i]["name"]
                            ? r.string(key_path(index_path("clients", i), "name"), clients[i]["name"])
                            : std::nullopt;
    if (!name || !client) continue;
    auto it = std::find_if(classes.begin(), classes.end(),
                           [&](const PriorityClassConfig& c) { return c.name == *name; });
    if (it == classes.end()) {
      std::string known;
      for (const PriorityClassConfig& c : classes) known += (known.empty() ? "" : ", ") + c.name;
      r.error(
          path, v,
          "names no priority class: " + smartlb::config::quoted(*name) + " (the classes are " + known + ")");
      continue;
    }
    it->clients.push_back(*client);
  }
  if (list || !cfg.policy.priority_classes.empty() ||
      std::any_of(classes.begin(), classes.end(),
                  [](const PriorityClassConfig& c) { return !c.clients.empty(); }))
    cfg.policy.priority_classes = std::move(classes);
}

}  // namespace smartlb::config::file
