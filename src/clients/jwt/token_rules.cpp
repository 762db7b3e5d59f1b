#include "smartlb/clients/jwt/token_rules.hpp"

#include <algorithm>

namespace smartlb::clients::jwt {

namespace {

std::string string_claim(const nlohmann::json& claims, const char* name) {
  const auto it = claims.find(name);
  return it != claims.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A NumericDate: seconds since the epoch (a JSON number). nullopt when absent; `bad` when not a number.
std::optional<WallTime> date_claim(const nlohmann::json& claims, const char* name, bool& bad) {
  const auto it = claims.find(name);
  if (it == claims.end()) return std::nullopt;
  if (!it->is_number()) {
    bad = true;
    return std::nullopt;
  }
  const double seconds = it->get<double>();
  if (!(seconds > -1e11 && seconds < 1e11)) {  // also NaN; beyond year 5000 is no real date
    bad = true;
    return std::nullopt;
  }
  return WallTime(std::chrono::duration_cast<WallTime::duration>(std::chrono::duration<double>(seconds)));
}

// The strings of a claim that is a string array (a lone string counts as one).
std::vector<std::string> strings_claim(const nlohmann::json& claims, const char* name) {
  std::vector<std::string> out;
  const auto it = claims.find(name);
  if (it == claims.end()) return out;
  if (it->is_string()) out.push_back(it->get<std::string>());
  if (it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

std::vector<std::string> tenant_issuers(const std::string& authority_host, const std::string& tenant_id) {
  std::string host = authority_host;
  while (!host.empty() && host.back() == '/') host.pop_back();
  return {host + "/" + tenant_id + "/v2.0", "https://sts.windows.net/" + tenant_id + "/"};
}

bool issued_by(const nlohmann::json& claims, const IssuerRules& rules) {
  const std::string iss = string_claim(claims, "iss");
  return !iss.empty() && contains(rules.issuers, iss);
}

std::optional<TokenRefusal> check_claims(const nlohmann::json& claims, const IssuerRules& rules,
                                         WallTime now) {
  bool bad = false;
  const auto exp = date_claim(claims, "exp", bad);
  const auto nbf = date_claim(claims, "nbf", bad);
  if (bad) return TokenRefusal::Malformed;
  if (!exp) return TokenRefusal::MissingClaim;
  if (now > *exp + rules.skew) return TokenRefusal::Expired;
  if (nbf && now + rules.skew < *nbf) return TokenRefusal::NotYetValid;
  const auto aud = strings_claim(claims, "aud");
  if (aud.empty()) return TokenRefusal::MissingClaim;
  if (std::none_of(aud.begin(), aud.end(),
                   [&](const std::string& a) { return contains(rules.audiences, a); }))
    return TokenRefusal::WrongAudience;
  if (!rules.required_roles.empty()) {
    const auto roles = strings_claim(claims, "roles");
    if (std::none_of(roles.begin(), roles.end(),
                     [&](const std::string& r) { return contains(rules.required_roles, r); }))
      return TokenRefusal::MissingRole;
  }
  return std::nullopt;
}

std::optional<VerifiedToken> derive_identity(const nlohmann::json& claims, const IssuerRules& rules) {
  const std::string oid = string_claim(claims, "oid"), sub = string_claim(claims, "sub");
  std::string upn = string_claim(claims, "upn");
  if (upn.empty()) upn = string_claim(claims, "preferred_username");
  std::string app = string_claim(claims, "azp");
  if (app.empty()) app = string_claim(claims, "appid");
  const bool has_scp = claims.contains("scp");
  const bool app_only =
      string_claim(claims, "idtyp") == "app" || (!has_scp && upn.empty() && (oid.empty() || oid == sub));

  VerifiedToken t;
  t.name = rules.name;
  if (app_only) {
    if (app.empty()) return std::nullopt;
    t.principal = "app:" + app;
  } else {
    const std::string& user = oid.empty() ? upn : oid;
    if (user.empty()) return std::nullopt;
    t.principal = "user:" + user;
    t.subjects.push_back(t.principal);
  }
  if (!app.empty()) t.subjects.push_back("app:" + app);
  for (const auto& r : strings_claim(claims, "roles")) t.subjects.push_back("role:" + r);
  for (const auto& g : strings_claim(claims, "groups")) t.subjects.push_back("group:" + g);
  if (const std::string tid = string_claim(claims, "tid"); !tid.empty())
    t.subjects.push_back("tenant:" + tid);
  bool bad = false;
  t.valid_until = date_claim(claims, "exp", bad).value_or(WallTime{}) + rules.skew;
  return t;
}

}  // namespace smartlb::clients::jwt
