// The config file's `token_issuers`: Entra ID tenants whose tokens clients may present.
#include <set>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {

// Entra ID tenants whose tokens clients may present. Their names are client names: unique
// among the clients' and CLIENT_ENTRA_NAME's.
void read_token_issuers(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("token_issuers", list) || !list) return;
  std::set<std::string> names;
  for (std::size_t i = 0; i < cfg.client_api_keys.size(); ++i)
    names.insert("client-" + std::to_string(i + 1));
  for (const auto& c : cfg.policy.clients) names.insert(c.name);
  for (const auto& t : cfg.client_token_issuers) names.insert(t.name);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("token_issuers", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kTokenIssuerKeys);
    TokenIssuerConfig t;
    bool ok = true;
    if (const auto name = n["name"]; !name) {
      r.error(key_path(path, "name"), n, "is required (the client name of its callers in logs and metrics)");
      ok = false;
    } else if (auto s = r.name(key_path(path, "name"), name)) {
      if (!names.insert(*s).second) {
        r.error(key_path(path, "name"), name,
                "duplicates another client's or token issuer's name " + smartlb::config::quoted(*s));
        ok = false;
      }
      t.name = *s;
    } else {
      ok = false;
    }
    if (const auto tenant = n["tenant_id"]; !tenant) {
      r.error(key_path(path, "tenant_id"), n, "is required (the tenant's id, a GUID)");
      ok = false;
    } else if (auto s = r.string(key_path(path, "tenant_id"), tenant)) {
      if (!is_tenant_guid(*s)) {
        r.error(
            key_path(path, "tenant_id"), tenant,
            "must be the tenant's id, a GUID (tokens carry it in iss), got " + smartlb::config::quoted(*s));
        ok = false;
      }
      t.tenant_id = *s;
    } else {
      ok = false;
    }
    t.audiences = r.strings(key_path(path, "audiences"), n["audiences"]);
    if (t.audiences.empty()) {
      r.error(
          key_path(path, "audiences"), n,
          "needs at least one audience (the API's application ID URI, e.g. api://smartlb, or its client id)");
      ok = false;
    }
    t.required_roles = r.strings(key_path(path, "required_roles"), n["required_roles"]);
    for (const char* key : {"authority_host", "discovery_url"}) {
      const auto v = n[key];
      if (!v) continue;
      if (auto s = r.string(key_path(path, key), v)) {
        if (auto bad = http_url_problem(*s)) {
          r.error(key_path(path, key), v, *bad);
          ok = false;
        }
        (std::string_view(key) == "authority_host" ? t.authority_host : t.discovery_url) = *s;
      } else {
        ok = false;
      }
    }
    if (t.authority_host.empty())
      if (auto it = r.env().find("AZURE_AUTHORITY_HOST");
          it != r.env().end() && !http_url_problem(it->second))
        t.authority_host = it->second;
    if (const auto v = n["clock_skew_seconds"]) {
      if (auto s = r.integer(key_path(path, "clock_skew_seconds"), v, 0, 600, "an integer from 0 to 600"))
        t.clock_skew = std::chrono::seconds(*s);
      else
        ok = false;
    }
    if (ok) cfg.policy.token_issuers.push_back(std::move(t));
  }
}

}  // namespace smartlb::config::file
