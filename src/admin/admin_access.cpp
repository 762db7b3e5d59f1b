#include "smartlb/admin/admin_access.hpp"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "smartlb/base/text.hpp"

namespace smartlb::admin {

TokenDigest token_digest(std::string_view token) {
  TokenDigest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

bool same_digest(const TokenDigest& a, const TokenDigest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string token_fingerprint(std::string_view token) {
  const TokenDigest d = token_digest(token);
  std::string out = "sha256:";
  base::append_hex(out, std::span(d).first(4));
  return out;
}

std::string AdminCaller::describe() const {
  return name + " (" + std::string(role == config::AdminRole::Write ? "write" : "read") + ", " + fingerprint +
         ")";
}

AdminAccess::AdminAccess(const config::AdminConfig& config) : metrics_open_(config.metrics_open) {
  for (const config::AdminToken& t : config.tokens)
    entries_.push_back({token_digest(t.token), {t.name, t.role, token_fingerprint(t.token)}});
}

std::optional<AdminCaller> AdminAccess::identify(std::string_view authorization) const {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if ((authorization[i] | 0x20) != kScheme[i]) return std::nullopt;
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  const TokenDigest presented = token_digest(token);
  // Every entry is compared, whichever matches: the time taken says nothing of which did.
  const Entry* match = nullptr;
  for (const Entry& e : entries_)
    if (same_digest(e.digest, presented)) match = &e;
  if (!match) return std::nullopt;
  return match->caller;
}

AdminDecision AdminAccess::decide(AdminNeed need, std::string_view authorization) const {
  using Verdict = AdminDecision::Verdict;
  AdminDecision d;
  if (need == AdminNeed::Open) return d;
  if (!tokens_set()) {
    if (need != AdminNeed::Write) return d;  // as the admin port always was: open for reading
    d.verdict = Verdict::Forbidden;
    d.message =
        "The admin API's write endpoints are off: set ADMIN_TOKENS (e.g. write:<a token of 16 or more "
        "characters>) or the config file's admin.tokens, then send it as Authorization: Bearer <token> "
        "(docs/operations.md).";
    return d;
  }
  if (need == AdminNeed::Metrics && metrics_open_) return d;
  d.caller = identify(authorization);
  if (!d.caller) {
    d.verdict = Verdict::Unauthorized;
    d.message = authorization.empty() ? "This endpoint needs an admin token: Authorization: Bearer <token>."
                                      : "The admin token is not valid.";
    return d;
  }
  if (need == AdminNeed::Write && d.caller->role != config::AdminRole::Write) {
    d.verdict = Verdict::Forbidden;
    d.message = "The token " + d.caller->name + " may read only; this endpoint needs a write token.";
  }
  return d;
}

}  // namespace smartlb::admin
