#pragma once
// Who may use the admin port (docs/operations.md): the bearer token of a request's
// Authorization header checked against ADMIN_TOKENS and the file's admin.tokens. Only SHA-256
// digests of the tokens are kept, and a presented token is compared with every one of them in
// constant time (CRYPTO_memcmp over equal-length digests: neither where a token differs nor how
// long it is shows in the time taken). A token never leaves this unit: callers get its name,
// role and fingerprint. Pure.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/config/config.hpp"

namespace smartlb::admin {

using TokenDigest = std::array<unsigned char, 32>;
TokenDigest token_digest(std::string_view token);
// Constant-time equality of two digests.
bool same_digest(const TokenDigest& a, const TokenDigest& b);
// What logs and answers show of a token: "sha256:" and the first 8 hex digits of its digest.
std::string token_fingerprint(std::string_view token);

// What an endpoint needs.
enum class AdminNeed : std::uint8_t {
  Open,     // /healthz, /readyz, the page's static document: always served
  Metrics,  // /metrics: as Read, unless ADMIN_METRICS_OPEN
  Read,     // /status, reading the admin API
  Write,    // the admin API's changes
};

struct AdminCaller {
  std::string name;  // the token's name ("write-1", "alice")
  config::AdminRole role = config::AdminRole::Read;
  std::string fingerprint;
  // "alice (write, sha256:1a2b3c4d)": how the log and /status name who changed something.
  std::string describe() const;
};

struct AdminDecision {
  enum class Verdict : std::uint8_t {
    Allow,
    Unauthorized,  // 401 with WWW-Authenticate: Bearer: no token, or not one of ours
    Forbidden,     // 403: a read token on a write endpoint, or writes without any token set
  };
  Verdict verdict = Verdict::Allow;
  std::optional<AdminCaller> caller;  // the token's holder, when a valid one came
  std::string message;                // why not, for the answer's body
};

class AdminAccess {
 public:
  explicit AdminAccess(const config::AdminConfig& config = {});

  // Tokens are set: every endpoint but the open ones needs one.
  bool tokens_set() const { return !entries_.empty(); }
  AdminDecision decide(AdminNeed need, std::string_view authorization) const;
  // The holder of the header's bearer token (the scheme is case-insensitive), if it is ours.
  std::optional<AdminCaller> identify(std::string_view authorization) const;

 private:
  struct Entry {
    TokenDigest digest;
    AdminCaller caller;
  };
  std::vector<Entry> entries_;
  bool metrics_open_ = false;
};

}  // namespace smartlb::admin
