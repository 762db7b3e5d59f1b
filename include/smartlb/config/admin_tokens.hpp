#pragma once
// The admin port's tokens as they are written: ADMIN_TOKENS ("read:TOKEN,write:TOKEN,...") and
// the config file's admin.tokens, checked alike. Messages name where a token is set, never the
// token.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/config/config.hpp"

namespace smartlb::config {

std::string_view to_string(AdminRole r);  // "read", "write"
std::optional<AdminRole> admin_role_named(std::string_view name);

// Why `token` cannot be an admin token, or nullopt: 16 to 512 characters of a bearer token
// (RFC 6750's token68: A-Z a-z 0-9 - . _ ~ + / and = at the end).
std::optional<std::string> admin_token_problem(std::string_view token);

// ADMIN_TOKENS' value: comma-separated "role:token" entries, named "<role>-<n>" (the n-th of
// its role). A problem is appended to `errors` as "<variable>: ...".
std::vector<AdminToken> parse_admin_tokens(std::string_view value, std::string_view variable,
                                           std::vector<std::string>& errors);

// Two entries holding the same token, or the same name: each entry from `from` on against
// those before it (the ones before `from` were checked with their own source). The messages
// say which entry, never the token; the caller prefixes where they are set.
std::vector<std::string> admin_token_conflicts(const AdminConfig& admin, std::size_t from);

}  // namespace smartlb::config
