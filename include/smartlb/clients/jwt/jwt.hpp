#pragma once
// A JWT taken apart (RFC 7519, compact JWS): the header's alg, kid and typ, the claims as
// JSON, the signed bytes and the signature. Nothing is trusted yet: parsing checks only the
// shape.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::clients::jwt {

struct Jwt {
  std::string alg, kid, typ;
  nlohmann::json claims;           // an object
  std::string_view signing_input;  // "<header>.<payload>", a view into the token
  std::string signature;           // decoded bytes
};

// Cheap, for choosing between a token and a key: "eyJ" (a JSON header, base64url), then a dot
// after the header. The full shape is checked by parse_jwt when the token is not cached.
bool looks_like_jwt(std::string_view bearer);

// nullopt: not three base64url parts, or a header or payload that is not a JSON object, or a
// header whose alg/kid/typ are not strings.
std::optional<Jwt> parse_jwt(std::string_view token);

}  // namespace smartlb::clients::jwt
