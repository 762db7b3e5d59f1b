#pragma once
// The credential a request carries to a backend configured with a static key -- or, with no
// key configured, the client's own credential passed through (an Entra ID token the client
// got itself, for one). Azure expects `api-key`, OpenAI-style APIs `Authorization: Bearer`.
#include <cstddef>
#include <string_view>

#include "smartlb/config/config.hpp"

namespace smartlb {

struct CredentialField {
  std::string_view name;
  std::string_view value;
};

// At most two fields (a passed-through api-key and Authorization); views into the arguments.
struct CredentialFields {
  CredentialField fields[2];
  std::size_t count = 0;
  const CredentialField* begin() const { return fields; }
  const CredentialField* end() const { return fields + count; }
};

struct ClientCredential {
  std::string_view api_key;        // the client's api-key field
  std::string_view authorization;  // the client's Authorization field
};

// `bearer` is "Bearer <backend's key>", prepared once; `azure_path` whether the request uses
// Azure's /openai/ paths (which makes `auth: auto` send api-key).
CredentialFields static_key_fields(const BackendConfig& b, std::string_view bearer, bool azure_path,
                                   const ClientCredential& client);

}  // namespace smartlb
