// No client credential reaches a backend: every credential header a client may send, on every
// path family, is replaced by the backend's own credential in the header its kind reads; a
// backend without a key gets the client's own credentials, never the one that identified the
// client to smartlb.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace credential_headers_test {  // named, not anonymous: tests/CMakeLists.txt

MockReply ok() { return {200, {{"content-type", "application/json"}}, "{}"}; }

// One value per credential header a client may send, each recognisable upstream.
const std::vector<std::pair<std::string, std::string>> kClientCredentials = {
    {"api-key", "client-azure-key"},         {"Authorization", "Bearer client-bearer-token"},
    {"x-api-key", "client-anthropic-key"},   {"Ocp-Apim-Subscription-Key", "client-apim-key"},
    {"x-goog-api-key", "client-gemini-key"},
};

// Whether any header the backend saw carries one of the client's credential values.
std::string leaked(const SeenRequest& seen) {
  for (const auto& [name, value] : seen.headers)
    for (const auto& [cname, cvalue] : kClientCredentials)
      if (value.find(cvalue.substr(cvalue.find(' ') + 1)) != std::string::npos) return name + ": " + value;
  return "";
}

struct PathCase {
  const char* method;
  const char* target;
  const char* backend_header;  // where `auth: auto` puts the backend's key for this family
  const char* backend_value;
};

const PathCase kPaths[] = {
    {"POST", "/openai/deployments/gpt/chat/completions?api-version=2024-10-21", "api-key", "backend-secret"},
    {"POST", "/openai/v1/chat/completions", "api-key", "backend-secret"},
    {"POST", "/openai/files?api-version=2024-10-21", "api-key", "backend-secret"},
    {"POST", "/v1/chat/completions", "authorization", "Bearer backend-secret"},
    {"GET", "/v1/models", "authorization", "Bearer backend-secret"},
    {"POST", "/v1/responses", "authorization", "Bearer backend-secret"},
    {"POST", "/anthropic/v1/messages", "x-api-key", "backend-secret"},
    {"POST", "/v1/messages", "x-api-key", "backend-secret"},
    {"POST", "/v1/messages/count_tokens", "x-api-key", "backend-secret"},
};

TEST(CredentialHeaders, NoClientCredentialReachesAKeyedBackendOnAnyPath) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url(), 1, 1, "backend-secret");
  p.start();
  for (const PathCase& c : kPaths) {
    SCOPED_TRACE(c.target);
    const auto r = http_call(p.port(), c.method, c.target, kClientCredentials,
                             std::string(c.method) == "GET" ? "" : "{}");
    ASSERT_EQ(r.status, 200u);
    const SeenRequest seen = backend.last_request();
    EXPECT_EQ(leaked(seen), "");
    EXPECT_EQ(seen.header(c.backend_header), c.backend_value);
    for (const char* other :
         {"api-key", "authorization", "x-api-key", "ocp-apim-subscription-key", "x-goog-api-key"}) {
      if (std::string(other) != c.backend_header) {
        EXPECT_FALSE(seen.has_header(other)) << other;
      }
    }
  }
}

TEST(CredentialHeaders, EachStyleSendsTheKeyInItsHeader) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  const std::pair<config::AuthStyle, std::pair<const char*, const char*>> styles[] = {
      {config::AuthStyle::ApiKey, {"api-key", "backend-secret"}},
      {config::AuthStyle::Bearer, {"authorization", "Bearer backend-secret"}},
      {config::AuthStyle::XApiKey, {"x-api-key", "backend-secret"}},
      {config::AuthStyle::Apim, {"ocp-apim-subscription-key", "backend-secret"}},
  };
  for (const auto& [style, expected] : styles) {
    SCOPED_TRACE(to_string(style));
    ProxyHarness p;
    p.add_backend("b", backend.url(), 1, 1, "backend-secret").auth = style;
    p.start();
    ASSERT_EQ(http_call(p.port(), "POST", "/v1/messages", kClientCredentials, "{}").status, 200u);
    const SeenRequest seen = backend.last_request();
    EXPECT_EQ(seen.header(expected.first), expected.second);
    EXPECT_EQ(leaked(seen), "");
  }
}

TEST(CredentialHeaders, AKeylessBackendGetsTheClientsOwnCredentialsAsTheyCame) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  ASSERT_EQ(http_call(p.port(), "POST", "/v1/messages",
                      {{"x-api-key", "their-anthropic-key"}, {"anthropic-version", "2023-06-01"}}, "{}")
                .status,
            200u);
  EXPECT_EQ(backend.last_request().header("x-api-key"), "their-anthropic-key");
  EXPECT_FALSE(backend.last_request().has_header("authorization"));
}

TEST(CredentialHeaders, TheKeyThatIdentifiedTheClientNeverPassesThrough) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.cfg.client_api_keys = {"smartlb-client-key"};
  p.add_backend("b", backend.url());  // keyless: the client's other credentials pass
  p.start();
  // The Anthropic SDK sends its key as x-api-key: it identifies the client, and stays here.
  auto r = http_call(p.port(), "POST", "/v1/messages", {{"x-api-key", "smartlb-client-key"}}, "{}");
  ASSERT_EQ(r.status, 200u);
  EXPECT_FALSE(backend.last_request().has_header("x-api-key"));
  // A key in api-key identifies the client; the Entra ID token beside it is for the backend.
  r = http_call(p.port(), "POST", "/openai/deployments/gpt/chat/completions?api-version=1",
                {{"api-key", "smartlb-client-key"}, {"Authorization", "Bearer entra-token"}}, "{}");
  ASSERT_EQ(r.status, 200u);
  EXPECT_FALSE(backend.last_request().has_header("api-key"));
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer entra-token");
  // A Bearer key identifies the client: nothing of it reaches the backend.
  r = http_call(p.port(), "POST", "/v1/chat/completions", {{"Authorization", "Bearer smartlb-client-key"}},
                "{}");
  ASSERT_EQ(r.status, 200u);
  EXPECT_FALSE(backend.last_request().has_header("authorization"));
  // An x-api-key that is not a client key is refused like any unknown key.
  EXPECT_EQ(http_call(p.port(), "POST", "/v1/messages", {{"x-api-key", "guess"}}, "{}").status, 401u);
}

}  // namespace credential_headers_test
}  // namespace smartlb::testing
