#include "smartlb/clients/jwt/jwt.hpp"

#include <algorithm>

#include "smartlb/clients/jwt/base64url.hpp"

namespace smartlb::clients::jwt {

namespace {

// Reads a string member of a JSON object; false when present but not a string.
bool read_string(const nlohmann::json& object, const char* name, std::string& out) {
  const auto it = object.find(name);
  if (it == object.end()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

std::optional<nlohmann::json> decode_object(std::string_view part) {
  auto bytes = base64url_decode(part);
  if (!bytes) return std::nullopt;
  auto j = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

}  // namespace

bool looks_like_jwt(std::string_view bearer) {
  return bearer.size() > 3 && bearer.substr(0, 3) == "eyJ" && bearer.find('.', 3) != std::string_view::npos;
}

std::optional<Jwt> parse_jwt(std::string_view token) {
  const auto first = token.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  const auto second = token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return std::nullopt;
  auto header = decode_object(token.substr(0, first));
  if (!header) return std::nullopt;
  auto claims = decode_object(token.substr(first + 1, second - first - 1));
  if (!claims) return std::nullopt;
  auto signature = base64url_decode(token.substr(second + 1));
  if (!signature) return std::nullopt;
  Jwt t;
  if (!read_string(*header, "alg", t.alg) || !read_string(*header, "kid", t.kid) ||
      !read_string(*header, "typ", t.typ))
    return std::nullopt;
  t.claims = std::move(*claims);
  t.signing_input = token.substr(0, second);
  t.signature = std::move(*signature);
  return t;
}

}  // namespace smartlb::clients::jwt
