// What reaches the backend: credentials, deployment rewrite, query, hop-by-hop headers, Host.
#include <gtest/gtest.h>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace transforms_test {  // named, not anonymous: tests/CMakeLists.txt

MockReply ok() {
  return {
      200,
      {{"content-type", "application/json"}, {"x-ratelimit-remaining-tokens", "999"}, {"x-custom", "kept"}},
      "{}"};
}

TEST(Transforms, ClientKeyReplacedByBackendApiKey) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url(), 1, 1, "backend-secret");
  p.start();
  auto r = http_call(p.port(), "POST", "/openai/deployments/gpt/chat/completions?api-version=1",
                     {{"api-key", "client-key"}, {"Authorization", "Bearer client-token"}}, "{}");
  EXPECT_EQ(r.status, 200u);
  const auto seen = backend.last_request();
  EXPECT_EQ(seen.header("api-key"), "backend-secret");
  EXPECT_FALSE(seen.has_header("authorization")) << "the client's token never goes upstream";
}

TEST(Transforms, OpenAiStyleBackendGetsBearer) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url(), 1, 1, "sk-backend");
  p.start();
  http_call(p.port(), "POST", "/v1/chat/completions", {{"Authorization", "Bearer client"}}, "{}");
  const auto seen = backend.last_request();
  EXPECT_EQ(seen.header("authorization"), "Bearer sk-backend");
  EXPECT_FALSE(seen.has_header("api-key"));
}

TEST(Transforms, BackendWithoutKeyPassesClientCredentialsThrough) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  http_call(p.port(), "POST", "/openai/deployments/gpt/chat/completions?api-version=1",
            {{"Authorization", "Bearer entra-token"}}, "{}");
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer entra-token");
}

TEST(Transforms, DeploymentRewriteAndQueryKept) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url()).deployment_name = "prod-gpt-4o";
  p.start();
  http_call(p.port(), "POST", "/openai/deployments/gpt/chat/completions?api-version=2024-10-21&x=gpt", {},
            "{}");
  EXPECT_EQ(backend.last_request().target,
            "/openai/deployments/prod-gpt-4o/chat/completions?api-version=2024-10-21&x=gpt");
}

TEST(Transforms, BasePathPrefixesTheTarget) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url() + "/gateway");
  p.start();
  http_call(p.port(), "GET", "/openai/models?api-version=1");
  EXPECT_EQ(backend.last_request().target, "/gateway/openai/models?api-version=1");
  EXPECT_EQ(backend.last_request().method, "GET");
}

TEST(Transforms, HopByHopHeadersStrippedAndHostSet) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send(
      "POST /v1/embeddings HTTP/1.1\r\nHost: proxy.example\r\nConnection: keep-alive, X-Private\r\n"
      "X-Private: secret\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: h2c\r\n"
      "Transfer-Encoding: chunked\r\nx-custom: yes\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
  const std::string res = c.read_until("\r\n\r\n{}");
  EXPECT_NE(res.find("200 OK"), std::string::npos);
  const auto seen = backend.last_request();
  EXPECT_EQ(seen.header("host"), "127.0.0.1:" + std::to_string(backend.port()));
  for (const char* h : {"x-private", "keep-alive", "te", "upgrade", "transfer-encoding"})
    EXPECT_FALSE(seen.has_header(h)) << h;
  EXPECT_EQ(seen.header("x-custom"), "yes");
  EXPECT_EQ(seen.header("content-length"), "2") << "a chunked client body goes upstream with its length";
  EXPECT_EQ(seen.body, "{}");
  EXPECT_FALSE(seen.header("x-request-id").empty()) << "a request id is passed upstream";
}

// `Proxy` and `Proxy-*` are no business of a backend (httpoxy): never forwarded, in any case.
TEST(Transforms, ProxyHeadersDoNotReachTheBackend) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  auto r = http_call(p.port(), "POST", "/v1/chat/completions",
                     {{"Proxy", "http://evil"},
                      {"Proxy-Authorization", "x"},
                      {"proxy-foo", "y"},
                      {"Content-Type", "application/json"},
                      {"x-custom", "yes"},
                      {"x-proxy-note", "kept"}},
                     "{}");
  EXPECT_EQ(r.status, 200u);
  const auto seen = backend.last_request();
  for (const char* h : {"proxy", "proxy-authorization", "proxy-foo"}) EXPECT_FALSE(seen.has_header(h)) << h;
  EXPECT_EQ(seen.header("x-custom"), "yes");
  EXPECT_EQ(seen.header("x-proxy-note"), "kept") << "only names that start with Proxy are dropped";
  EXPECT_EQ(seen.header("content-type"), "application/json");
}

TEST(Transforms, ResponseNamesBackendHidesQuotaHeadersKeepsOthers) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.add_backend("eastus", backend.url());
  p.start();
  auto r = http_call(p.port(), "POST", "/v1/chat/completions", {{"x-request-id", "my-id-1"}}, "{}");
  EXPECT_EQ(r.header("x-smartlb-backend"), "eastus");
  EXPECT_FALSE(r.has_header("x-ratelimit-remaining-tokens")) << "one backend's quota is not the pool's";
  EXPECT_EQ(r.header("x-custom"), "kept");
  EXPECT_EQ(r.header("x-request-id"), "my-id-1");
  EXPECT_EQ(backend.last_request().header("x-request-id"), "my-id-1");
}

TEST(Transforms, ClientApiKeysAreEnforced) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  ProxyHarness p;
  p.cfg.client_api_keys = {"team-a-key-123"};
  p.add_backend("b", backend.url(), 1, 1, "backend-secret");
  p.start();
  auto denied = http_call(p.port(), "POST", "/v1/chat/completions", {{"api-key", "guess"}}, "{}");
  EXPECT_EQ(denied.status, 401u);
  EXPECT_EQ(backend.request_count(), 0u);
  auto allowed =
      http_call(p.port(), "POST", "/v1/chat/completions", {{"Authorization", "Bearer team-a-key-123"}}, "{}");
  EXPECT_EQ(allowed.status, 200u);
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer backend-secret");
}

TEST(Transforms, InterimResponsesFromTheBackendAreNotRelayedAsTheAnswer) {
  MockBackend backend([](const SeenRequest&) {
    MockReply r = ok();
    r.interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n";
    return r;
  });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  auto r = http_call(p.port(), "POST", "/v1/chat/completions", {}, "{}");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "{}");
}

}  // namespace transforms_test
}  // namespace smartlb::testing
