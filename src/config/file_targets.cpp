// The config file's `targets`: a deployment (Azure) or model (OpenAI-style) on a backend, what
// rules route to.
#include <algorithm>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {

void read_targets(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("targets", list) || !list) return;
  std::vector<std::string> backend_names;
  for (const auto& b : cfg.backends) backend_names.push_back(b.name);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("targets", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kTargetKeys);
    TargetConfig t;
    bool ok = true;
    if (const auto id = n["id"]; !id) {
      r.error(key_path(path, "id"), n, "is required");
      ok = false;
    } else if (auto s = r.string(key_path(path, "id"), id)) {
      if (s->empty() || s->size() > 200 ||
          std::any_of(s->begin(), s->end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; })) {
        r.error(key_path(path, "id"), id,
                "must be 1-200 characters without spaces, got " + smartlb::config::quoted(*s));
        ok = false;
      } else if (std::any_of(cfg.policy.targets.begin(), cfg.policy.targets.end(),
                             [&](const TargetConfig& o) { return o.id == *s; })) {
        r.error(key_path(path, "id"), id, "duplicates another target's id " + smartlb::config::quoted(*s));
        ok = false;
      } else {
        t.id = *s;
      }
    } else {
      ok = false;
    }
    // A target whose backend is wrong is still kept (the configuration is refused anyway), so
    // that the rules naming it are not reported too.
    if (const auto b = n["backend"]; !b) {
      r.error(key_path(path, "backend"), n, "is required");
    } else if (auto s = r.string(key_path(path, "backend"), b)) {
      if (std::find(backend_names.begin(), backend_names.end(), *s) == backend_names.end()) {
        std::string msg = "no backend is named " + smartlb::config::quoted(*s);
        if (const auto hint = closest(*s, backend_names); !hint.empty())
          msg += " (did you mean \"" + hint + "\"?)";
        r.error(key_path(path, "backend"), b, msg);
      } else {
        t.backend = *s;
      }
    }
    const auto dep = n["deployment"], model = n["model"];
    if (dep && model) r.error(path, n, "takes deployment (Azure) or model (OpenAI-style), not both");
    for (const auto& [key, node] : {std::pair{"deployment", dep}, std::pair{"model", model}}) {
      if (!node) continue;
      if (auto s = r.string(key_path(path, key), node)) {
        if (!is_valid_deployment_name(*s))
          r.error(key_path(path, key), node,
                  "must be 1-128 characters of A-Z a-z 0-9 . _ - ~, got " + smartlb::config::quoted(*s));
        else
          t.upstream_name = *s;
      }
    }
    t.aliases = r.strings(key_path(path, "aliases"), n["aliases"]);
    if (const auto v = n["quota_group"])
      if (auto g = r.name(key_path(path, "quota_group"), v)) t.quota_group = *g;
    if (ok) cfg.policy.targets.push_back(std::move(t));
  }
}

}  // namespace smartlb::config::file
