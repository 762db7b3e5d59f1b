#pragma once
// The credential a request carries to a backend configured with a static key -- or, with no
// key configured, the client's own credentials passed through (an Entra ID token the client
// got itself, for one). Azure expects `api-key`, OpenAI-style APIs `Authorization: Bearer`,
// Anthropic's API `x-api-key` and an API Management gateway `Ocp-Apim-Subscription-Key`.
#include <cstddef>
#include <string_view>

#include "smartlb/config/config.hpp"
#include "smartlb/http/api_family.hpp"

namespace smartlb::credentials {

struct CredentialField {
  std::string_view name;
  std::string_view value;
};

// The credential fields of one request (views): the backend's, or the client's that pass.
struct CredentialFields {
  static constexpr std::size_t kMax = 5;  // one of each credential header (http/header_rules)
  CredentialField fields[kMax];
  std::size_t count = 0;
  void add(std::string_view name, std::string_view value) {
    if (count < kMax && !value.empty()) fields[count++] = {name, value};
  }
  const CredentialField* begin() const { return fields; }
  const CredentialField* end() const { return fields + count; }
  bool empty() const { return count == 0; }
};

// The header style a backend's key goes in for a request of `family`: `auth: auto` is
// `x-api-key` for Claude's Messages API, `api-key` on an Azure host or an Azure path, else
// Bearer; any other style is itself.
config::AuthStyle effective_auth(const config::BackendConfig& b, http::ApiFamily family);

// `bearer` is "Bearer <backend's key>", prepared once. `client`: the client's credential fields
// that may pass through to a backend without a key of its own (never the one that identified
// the client to smartlb).
CredentialFields static_key_fields(const config::BackendConfig& b, std::string_view bearer,
                                   http::ApiFamily family, const CredentialFields& client);

}  // namespace smartlb::credentials
