#pragma once
// An Entra ID token request and answer as plain values: each source builds a TokenRequest (the
// fetcher only sends it), and every answer is parsed by parse_token_answer. No I/O here.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace smartlb::credentials::entra {

using WallTime = std::chrono::system_clock::time_point;

struct TokenRequest {
  std::string method;  // "GET" or "POST"
  std::string url;     // scheme://host[:port]/path?query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string form_body;  // application/x-www-form-urlencoded (POST only)
  // Only the answer's status is wanted (a backend's health probe, net/health_prober, sends its
  // requests through the same one-shot client): the body is not read.
  bool status_only = false;
};

// A request, or why none could be built (an unreadable federated token file, say).
struct TokenRequestResult {
  std::optional<TokenRequest> request;
  std::string error;
};

struct AccessToken {
  std::string token;  // secret: never logged, shown or put in an error
  WallTime expires_at;
};

struct TokenAnswer {
  std::optional<AccessToken> token;
  std::string error;  // what went wrong, without the token
};

// Any source's answer: `expires_in` (seconds from `now`) is preferred, else `expires_on`
// (epoch seconds), each a JSON number or a string of digits. A non-2xx status or a missing
// field gives an error naming it; an error answer's `error` / `error_description` / `message`
// is quoted (shortened).
TokenAnswer parse_token_answer(unsigned status, std::string_view body, WallTime now);

// application/x-www-form-urlencoded and URL query encoding of one value (RFC 3986
// unreserved characters kept, everything else %XX).
std::string form_encode(std::string_view value);

// The resource a managed identity endpoint wants for a scope: the scope without "/.default".
std::string resource_of_scope(std::string_view scope);

}  // namespace smartlb::credentials::entra
