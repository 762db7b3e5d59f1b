// The config file's `model_configs`, TrueFoundry's schema: a target's (or a model's targets')
// declared quota (`usage_limits`) and breaker (`failure_tolerance`), and smartlb's own
// `first_token_timeout_seconds`.
#include <algorithm>
#include <cmath>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {

void read_model_configs(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("model_configs", list) || !list) return;
  // A target id's own entry wins over a model name's; among model names, the first.
  std::vector<int> rank(cfg.policy.targets.size(), 0);  // 0 none, 1 by model name, 2 by id
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("model_configs", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kModelConfigKeys);
    std::string model;
    if (const auto m = n["model"]; !m) {
      r.error(key_path(path, "model"), n, "is required");
      continue;
    } else if (auto s = r.string(key_path(path, "model"), m)) {
      model = *s;
    } else {
      continue;
    }
    std::int64_t tpm = 0, rpm = 0;
    std::optional<std::uint32_t> allowed;
    std::chrono::seconds cooldown{0};
    if (const auto u = n["usage_limits"]; u && !u.IsNull()) {
      const std::string upath = key_path(path, "usage_limits");
      if (r.is_map(upath, u)) {
        r.check_keys(upath, u, kUsageLimitKeys);
        if (const auto v = u["tokens_per_minute"])
          if (auto x = r.integer(key_path(upath, "tokens_per_minute"), v, 1, 1'000'000'000'000ll,
                                 "a positive integer"))
            tpm = *x;
        if (const auto v = u["requests_per_minute"])
          if (auto x = r.integer(key_path(upath, "requests_per_minute"), v, 1, 1'000'000'000ll,
                                 "a positive integer"))
            rpm = *x;
      }
    }
    if (const auto f = n["failure_tolerance"]; f && !f.IsNull()) {
      const std::string fpath = key_path(path, "failure_tolerance");
      if (r.is_map(fpath, f)) {
        r.check_keys(fpath, f, kToleranceKeys);
        const auto a = f["allowed_failures_per_minute"], c = f["cooldown_period_minutes"];
        if (!a)
          r.error(key_path(fpath, "allowed_failures_per_minute"), f, "is required with failure_tolerance");
        if (!c) r.error(key_path(fpath, "cooldown_period_minutes"), f, "is required with failure_tolerance");
        if (a)
          if (auto x = r.integer(key_path(fpath, "allowed_failures_per_minute"), a, 0, 1'000'000,
                                 "an integer from 0 to 1000000"))
            allowed = static_cast<std::uint32_t>(*x);
        if (c)
          if (auto x = r.number(key_path(fpath, "cooldown_period_minutes"), c, 0.01, 1440,
                                "a number of minutes from 0.01 to 1440"))
            cooldown = std::chrono::seconds(std::max<long long>(1, std::llround(*x * 60)));
        if (!a || !c) allowed.reset();
      }
    }
    std::optional<std::chrono::milliseconds> first_token;
    if (const auto v = n["first_token_timeout_seconds"])
      if (auto x = r.number(key_path(path, "first_token_timeout_seconds"), v, 0, 86'400,
                            "a number of seconds from 0 (off) to 86400"))
        first_token = std::chrono::milliseconds(std::llround(*x * 1000));
    bool any = false;
    for (std::size_t k = 0; k < cfg.policy.targets.size(); ++k) {
      TargetConfig& t = cfg.policy.targets[k];
      const int how = t.id == model ? 2 : t.serves(model) ? 1 : 0;
      if (how == 0) continue;
      any = true;
      if (rank[k] >= how) continue;
      rank[k] = how;
      if (tpm) t.tpm = tpm;
      if (rpm) t.rpm = rpm;
      if (allowed) {
        t.allowed_failures_per_minute = allowed;
        t.breaker_cooldown = cooldown;
      }
      if (first_token) t.first_token_timeout = first_token;
    }
    if (!any) {
      std::vector<std::string> ids;
      for (const auto& x : cfg.policy.targets) ids.push_back(x.id);
      std::string msg = "no target is or serves the model " + smartlb::config::quoted(model);
      if (const auto hint = closest(model, ids); !hint.empty()) msg += " (did you mean \"" + hint + "\"?)";
      r.error(key_path(path, "model"), n["model"], msg);
    }
  }
}

}  // namespace smartlb::config::file
