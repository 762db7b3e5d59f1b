#pragma once
// Why a bearer token was refused: one value per reason, each with a label (metrics, logs) and a
// message for the client's 401. Neither ever contains the token.
#include <string_view>

namespace smartlb::clients::jwt {

enum class TokenRefusal {
  Malformed,             // not three base64url parts of JSON, or a claim of the wrong type
  UnsupportedAlgorithm,  // `alg` is not RS256 (none, HS256, ...)
  UnknownIssuer,         // `iss` is none of the configured tenants'
  KeysUnavailable,       // the issuer's signing keys have not been fetched (yet)
  UnknownKey,            // `kid` is not in the issuer's published keys
  BadSignature,          // the signature does not verify with the key `kid` names
  MissingClaim,          // no `exp`, `aud`, or nothing to name the caller by
  Expired,               // `exp` (plus the clock skew) has passed
  NotYetValid,           // `nbf` (minus the clock skew) is still ahead
  WrongAudience,         // `aud` is none of the configured audiences
  MissingRole,           // required roles are configured and `roles` holds none of them
};

// "malformed", "unsupported_algorithm", ...: a bounded label for metrics.
std::string_view label(TokenRefusal r);
// A sentence for the client: "The bearer token has expired." ...
std::string_view message(TokenRefusal r);

}  // namespace smartlb::clients::jwt
