#pragma once
// What a configured token issuer (an Entra ID tenant) accepts, the checks of a token's claims
// against it at a given time, and who the caller of an accepted token is. Pure: the signature
// is checked before (key_set.hpp), the time is passed in.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smartlb/clients/jwt/token_refusal.hpp"

namespace smartlb::clients::jwt {

using WallTime = std::chrono::system_clock::time_point;

struct IssuerRules {
  std::string name;                         // the client name of its callers (logs, metrics)
  std::vector<std::string> issuers;         // accepted `iss` values, exact match
  std::vector<std::string> audiences;       // `aud` (a string or an array) must hold one of them
  std::vector<std::string> required_roles;  // when set, `roles` must hold one of them
  std::chrono::seconds skew{60};            // allowed on `exp` and `nbf`
};

// The v2 (`<authority>/<tenant>/v2.0`) and v1 (`https://sts.windows.net/<tenant>/`) issuers of
// a tenant. `authority_host` without a trailing slash, e.g. "https://login.microsoftonline.com".
std::vector<std::string> tenant_issuers(const std::string& authority_host, const std::string& tenant_id);

// Whether `claims` name one of `rules.issuers` in `iss` (chooses the issuer of a token).
bool issued_by(const nlohmann::json& claims, const IssuerRules& rules);

// exp (required) and nbf against `now` with the skew; aud; required roles.
std::optional<TokenRefusal> check_claims(const nlohmann::json& claims, const IssuerRules& rules,
                                         WallTime now);

// Who an accepted token's caller is.
struct VerifiedToken {
  std::string name;       // the issuer's name
  std::string principal;  // "user:<oid>" (or "user:<upn>"), or "app:<azp|appid>" for app-only tokens
  std::vector<std::string> subjects;  // the principal, app:, role:, group:, tenant:
  WallTime valid_until;               // exp + skew
};

// Subjects: "user:<oid or upn>" for a user's token; "app:<azp or appid>" for every token that
// names its client application; "role:<r>" per role; "group:<id>" per group; "tenant:<tid>".
// App-only tokens (idtyp "app", or no scp and no upn with oid == sub) have "app:<id>" as their
// principal. nullopt: nothing names the caller (MissingClaim).
std::optional<VerifiedToken> derive_identity(const nlohmann::json& claims, const IssuerRules& rules);

}  // namespace smartlb::clients::jwt
