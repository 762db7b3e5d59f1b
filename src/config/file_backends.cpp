// The config file's `backends`: where requests go, with which credential and quota.
#include <algorithm>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/entra_env.hpp"
#include "smartlb/config/url.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {
namespace {

AuthStyle parse_auth(Reader& r, const std::string& path, const YAML::Node& n, bool& ok) {
  const auto s = r.string(path, n);
  ok = true;
  if (s)
    if (const std::optional<AuthStyle> style = auth_style_named(*s)) return *style;
  if (s) r.error(path, n, "must be " + std::string(kAuthStyleNames) + ", got " + smartlb::config::quoted(*s));
  ok = false;
  return AuthStyle::Auto;
}

// `auth: entra` and its `entra:` block, resolved with the process-wide Azure variables as
// BACKEND_X_ENTRA_* are (config/entra_env.hpp).
void read_entra(Reader& r, const std::string& path, const YAML::Node& n, BackendConfig& b) {
  const auto block = n["entra"];
  if (b.auth != AuthStyle::Entra) {
    if (block) r.error(key_path(path, "entra"), block, "applies only with auth: entra");
    return;
  }
  b.key_setting = "the role assignment of its Entra ID identity (Cognitive Services OpenAI User)";
  if (n["api_key"]) r.error(key_path(path, "api_key"), n["api_key"], "must not be set with auth: entra");
  std::optional<std::string> source, scope, client_id;
  const std::string epath = key_path(path, "entra");
  if (block && !block.IsNull() && r.is_map(epath, block)) {
    r.check_keys(epath, block, kEntraKeys);
    if (const auto v = block["source"]) source = r.string(key_path(epath, "source"), v);
    if (const auto v = block["scope"]) scope = r.string(key_path(epath, "scope"), v);
    if (const auto v = block["client_id"]) client_id = r.string(key_path(epath, "client_id"), v);
  }
  EntraBackendSettings settings;
  settings.source = source ? &*source : nullptr;
  settings.scope = scope ? &*scope : nullptr;
  settings.client_id = client_id ? &*client_id : nullptr;
  settings.source_name = key_path(epath, "source");
  settings.scope_name = key_path(epath, "scope");
  settings.client_id_name = key_path(epath, "client_id");
  for (auto& e : resolve_entra_credential(r.env(), settings, b.entra)) r.errors.push_back(std::move(e));
}

}  // namespace

void read_backends(Reader& r, const YAML::Node& list, bool azure_clients, Config& cfg) {
  if (!r.is_list("backends", list) || !list) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("backends", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kBackendKeys);
    BackendConfig b;
    b.key_setting = key_path(path, "api_key");
    if (const auto name = n["name"]; !name) {
      r.error(key_path(path, "name"), n, "is required");
    } else if (auto s = r.name(key_path(path, "name"), name)) {
      b.name = *s;
    }
    if (const auto url = n["url"]; !url) {
      r.error(key_path(path, "url"), n, "is required");
    } else if (auto s = r.string(key_path(path, "url"), url)) {
      auto parsed = parse_backend_url(*s);
      if (!parsed.url) {
        r.error(key_path(path, "url"), url, parsed.error + ", got " + smartlb::config::quoted(*s));
      } else {
        b.url = std::move(*parsed.url);
        b.azure_host = is_azure_host(b.url.host);
        if (auto w = doubled_prefix_warning(b.url, key_path(path, "url"), azure_clients))
          r.warn(key_path(path, "url"), url, *w);
      }
    }
    if (const auto key = n["api_key"]) {
      if (auto s = r.string(key_path(path, "api_key"), key)) {
        if (const auto problem = api_key_problem(*s))
          r.error(key_path(path, "api_key"), key, *problem);
        else
          b.api_key = *s;
      }
    }
    if (const auto auth = n["auth"]) {
      bool ok = false;
      b.auth = parse_auth(r, key_path(path, "auth"), auth, ok);
    }
    read_entra(r, path, n, b);
    if (const auto v = n["quota_group"])
      if (auto g = r.name(key_path(path, "quota_group"), v)) b.quota_group = *g;
    if (const auto v = n["priority"])
      if (auto x = r.integer(key_path(path, "priority"), v, -1'000'000, 1'000'000, "an integer"))
        b.priority = static_cast<int>(*x);
    if (const auto v = n["weight"])
      if (auto x = r.integer(key_path(path, "weight"), v, 1, 1'000'000, "a positive integer"))
        b.weight = static_cast<std::uint32_t>(*x);
    if (const auto v = n["tpm"])
      if (auto x = r.integer(key_path(path, "tpm"), v, 1, 1'000'000'000'000ll, "a positive integer"))
        b.tpm = *x;
    if (const auto v = n["rpm"])
      if (auto x = r.integer(key_path(path, "rpm"), v, 1, 1'000'000'000ll, "a positive integer")) b.rpm = *x;
    if (const auto v = n["deployment_name"])
      if (auto s = r.string(key_path(path, "deployment_name"), v)) {
        if (!is_valid_deployment_name(*s))
          r.error(key_path(path, "deployment_name"), v,
                  "must be 1-128 characters of A-Z a-z 0-9 . _ - ~, got " + smartlb::config::quoted(*s));
        else
          b.deployment_name = *s;
      }
    if (const auto v = n["resource"])
      if (auto s = r.string(key_path(path, "resource"), v)) {
        if (!is_valid_resource_name(*s))
          r.error(
              key_path(path, "resource"), v,
              "must be 1-256 visible ASCII characters without spaces, got " + smartlb::config::quoted(*s));
        else
          b.resource = *s;
      }
    if (const auto v = n["health_probe_seconds"])
      if (auto x = r.integer(key_path(path, "health_probe_seconds"), v, 0, 3'600, "0 (off) to 3600 seconds"))
        b.health_probe_interval = std::chrono::seconds(*x);
    if (const auto v = n["health_probe_path"])
      if (auto s = r.string(key_path(path, "health_probe_path"), v)) {
        if (!is_probe_path(*s))
          r.error(key_path(path, "health_probe_path"), v,
                  "must be a path starting with /, without spaces, got " + smartlb::config::quoted(*s));
        else
          b.health_probe_path = *s;
      }
    if (b.name.empty()) continue;
    const auto clash = std::find_if(cfg.backends.begin(), cfg.backends.end(),
                                    [&](const BackendConfig& o) { return o.name == b.name; });
    if (clash != cfg.backends.end()) {
      r.error(key_path(path, "name"), n["name"],
              "duplicates the backend " + smartlb::config::quoted(b.name) +
                  (clash->id > 0 ? " of BACKEND_" + std::to_string(clash->id) + "_*" : std::string()));
      continue;
    }
    cfg.backends.push_back(std::move(b));
  }
}

}  // namespace smartlb::config::file
