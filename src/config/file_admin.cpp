// The config file's `admin` section: the admin port's tokens (docs/operations.md).
#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/admin_tokens.hpp"

namespace smartlb::config::file {
namespace {

// One entry of admin.tokens, or nullopt with its errors reported.
std::optional<AdminToken> read_token(Reader& r, const std::string& path, const YAML::Node& e) {
  if (!r.is_map(path, e)) return std::nullopt;
  r.check_keys(path, e, kAdminTokenKeys);
  AdminToken t;
  bool ok = true;
  if (const auto v = e["name"]) {
    if (auto name = r.name(key_path(path, "name"), v))
      t.name = *name;
    else
      ok = false;
  } else {
    r.error(path, e, "needs a name (shown in the log of what it changed)");
    ok = false;
  }
  if (const auto v = e["role"]) {
    if (const auto role = v.IsScalar() ? admin_role_named(v.Scalar()) : std::nullopt) {
      t.role = *role;
    } else {
      r.error(key_path(path, "role"), v, "must be read or write");
      ok = false;
    }
  } else {
    r.error(path, e, "needs a role: read or write");
    ok = false;
  }
  if (const auto v = e["token"]) {
    if (auto token = r.string(key_path(path, "token"), v)) {
      // The message says what is wrong with it, never the token.
      if (const auto problem = admin_token_problem(*token)) {
        r.error(key_path(path, "token"), v, *problem);
        ok = false;
      } else {
        t.token = std::move(*token);
      }
    } else {
      ok = false;
    }
  } else {
    r.error(path, e, "needs a token (e.g. ${ADMIN_TOKEN})");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return t;
}

}  // namespace

// The file's `admin:` section: tokens added to ADMIN_TOKENS' (a name, a role, the token,
// usually a ${NAME} reference), and metrics_open over ADMIN_METRICS_OPEN.
void read_admin(Reader& r, const YAML::Node& n, Config& cfg) {
  if (!n || n.IsNull() || !r.is_map("admin", n)) return;
  r.check_keys("admin", n, kAdminKeys);
  if (const auto v = n["metrics_open"])
    if (auto b = r.boolean("admin.metrics_open", v)) cfg.admin.metrics_open = *b;
  const YAML::Node list = n["tokens"];
  if (!r.is_list("admin.tokens", list) || !list) return;
  const std::size_t from = cfg.admin.tokens.size();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (auto t = read_token(r, index_path("admin.tokens", i), list[i]))
      cfg.admin.tokens.push_back(std::move(*t));
  for (const auto& conflict : admin_token_conflicts(cfg.admin, from)) r.error("admin.tokens", list, conflict);
}

}  // namespace smartlb::config::file
