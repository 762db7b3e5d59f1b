#pragma once
// base64url without padding (RFC 7515 section 2), as the three parts of a JWT and the `n` and
// `e` of a JSON Web Key are written. Strict: padding, whitespace or any other character, and a
// length no encoding produces, are refused.
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::clients::jwt {

std::optional<std::string> base64url_decode(std::string_view text);
std::string base64url_encode(std::string_view bytes);  // for tests and tools

}  // namespace smartlb::clients::jwt
