#include "smartlb/clients/jwt/token_refusal.hpp"

namespace smartlb::clients::jwt {

std::string_view label(TokenRefusal r) {
  switch (r) {
    case TokenRefusal::Malformed:
      return "malformed";
    case TokenRefusal::UnsupportedAlgorithm:
      return "unsupported_algorithm";
    case TokenRefusal::UnknownIssuer:
      return "unknown_issuer";
    case TokenRefusal::KeysUnavailable:
      return "keys_unavailable";
    case TokenRefusal::UnknownKey:
      return "unknown_key";
    case TokenRefusal::BadSignature:
      return "bad_signature";
    case TokenRefusal::MissingClaim:
      return "missing_claim";
    case TokenRefusal::Expired:
      return "expired";
    case TokenRefusal::NotYetValid:
      return "not_yet_valid";
    case TokenRefusal::WrongAudience:
      return "wrong_audience";
    case TokenRefusal::MissingRole:
      return "missing_role";
  }
  return "malformed";
}

std::string_view message(TokenRefusal r) {
  switch (r) {
    case TokenRefusal::Malformed:
      return "Access denied: the bearer token is not a well-formed JWT.";
    case TokenRefusal::UnsupportedAlgorithm:
      return "Access denied: the bearer token's signing algorithm is not accepted (only RS256).";
    case TokenRefusal::UnknownIssuer:
      return "Access denied: the bearer token was issued by a tenant this proxy does not accept.";
    case TokenRefusal::KeysUnavailable:
      return "Access denied: the signing keys of the bearer token's issuer are not available yet; retry "
             "shortly.";
    case TokenRefusal::UnknownKey:
      return "Access denied: the bearer token is signed with a key its issuer does not publish.";
    case TokenRefusal::BadSignature:
      return "Access denied: the bearer token's signature is not valid.";
    case TokenRefusal::MissingClaim:
      return "Access denied: the bearer token lacks a required claim (exp, aud, or the caller's oid, upn or "
             "appid).";
    case TokenRefusal::Expired:
      return "Access denied: the bearer token has expired.";
    case TokenRefusal::NotYetValid:
      return "Access denied: the bearer token is not valid yet (nbf).";
    case TokenRefusal::WrongAudience:
      return "Access denied: the bearer token is for another audience (aud).";
    case TokenRefusal::MissingRole:
      return "Access denied: the bearer token carries none of the required roles.";
  }
  return "Access denied.";
}

}  // namespace smartlb::clients::jwt
