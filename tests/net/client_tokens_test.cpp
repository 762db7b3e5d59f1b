// Clients with Entra ID tokens, over sockets: a mock OpenID discovery + JWKS endpoint publishes
// keys made for the test; a good token is forwarded and its subjects pick the rule; a bad one
// gets a 401 before its body is read and the backend is never called; a token signed with a
// rotated-in key makes the proxy fetch the keys again once, then passes.
#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "jwt_signer.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb::testing {
namespace client_tokens_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr const char* kTenant = "aaaabbbb-cccc-4ddd-8eee-ffff00001111";
const std::string kPath = "/openai/deployments/m/chat/completions?api-version=1";

MockReply ok(const std::string& who) {
  return {200, {{"content-type", "application/json"}}, "{\"from\":\"" + who + "\"}"};
}

// The tenant's OpenID configuration and its key set, which a test can change (a key rotation).
class MockIssuer {
 public:
  MockIssuer()
      : server_([this](const SeenRequest& r) {
          std::lock_guard lock(mutex_);
          if (r.target == "/tenant/v2.0/.well-known/openid-configuration") {
            ++discovery_fetches_;
            return MockReply{200,
                             {{"content-type", "application/json"}},
                             nlohmann::json{{"jwks_uri", server_.url() + "/tenant/keys"}}.dump()};
          }
          if (r.target == "/tenant/keys")
            return MockReply{200, {{"content-type", "application/json"}}, jwks_};
          return MockReply{404, {}, "{}"};
        }) {}

  std::string discovery_url() const {
    return server_.url() + "/tenant/v2.0/.well-known/openid-configuration";
  }
  void publish(const std::vector<const TestRsaKey*>& keys) {
    std::lock_guard lock(mutex_);
    jwks_ = jwks_of(keys);
  }
  int discovery_fetches() const {
    std::lock_guard lock(mutex_);
    return discovery_fetches_;
  }

 private:
  mutable std::mutex mutex_;
  std::string jwks_ = R"({"keys":[]})";
  int discovery_fetches_ = 0;
  MockBackend server_;  // last: its thread stops before the members it reads go
};

const TestRsaKey& key_a() {
  static const TestRsaKey k("key-a");
  return k;
}
const TestRsaKey& key_b() {
  static const TestRsaKey k("key-b");
  return k;
}

class ClientTokens : public ::testing::Test {
 protected:
  ClientTokens() {
    issuer.publish({&key_a()});
    config::EnvMap env{{"A_URL", a.url()}, {"B_URL", b.url()}, {"DISCOVERY_URL", issuer.discovery_url()}};
    auto r = config::load_config_text(env, R"(
backends:
  - {name: a, url: "${A_URL}", api_key: upstream-key-a}
  - {name: b, url: "${B_URL}", api_key: upstream-key-b}
targets: [{id: a/m, backend: a}, {id: b/m, backend: b}]
clients:
  - {name: batch, key: batch-key-123, subjects: [team:batch]}
token_issuers:
  - name: contoso
    tenant_id: aaaabbbb-cccc-4ddd-8eee-ffff00001111
    audiences: [api://smartlb]
    discovery_url: "${DISCOVERY_URL}"
subject_limits:
  - {subject: "role:Trial", limits: {requests_per_minute: 1}}
rules:
  - {id: writers, type: priority-based-routing, when: {subjects: [role:Writer]}, load_balance_targets: [{target: a/m}]}
  - {id: rest, type: priority-based-routing, load_balance_targets: [{target: b/m}]}
)",
                                      "tokens.yaml");
    EXPECT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0]);
    const config::Config process = p.cfg;
    p.cfg = *r.config;
    p.cfg.listen_address = process.listen_address;
    p.cfg.port = process.port;
    p.cfg.admin_port = process.admin_port;
    p.cfg.threads = 1;  // one worker: one token cache, so the refetch counts are exact
    p.cfg.access_log = process.access_log;
    p.start();
  }

  nlohmann::json claims(std::vector<std::string> roles) const {
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(p.clock.wall_now().time_since_epoch()).count();
    return {{"iss", "https://login.microsoftonline.com/" + std::string(kTenant) + "/v2.0"},
            {"aud", "api://smartlb"},
            {"exp", now + 3600},
            {"nbf", now - 5},
            {"tid", kTenant},
            {"oid", "oid-alice"},
            {"sub", "sub-alice"},
            {"scp", "access"},
            {"azp", "app-chat"},
            {"roles", roles}};
  }
  HttpResponse call(const std::string& token) {
    return http_call(p.port(), "POST", kPath, {{"Authorization", "Bearer " + token}}, "{}");
  }

  MockBackend a{[](const SeenRequest&) { return ok("a"); }};
  MockBackend b{[](const SeenRequest&) { return ok("b"); }};
  MockIssuer issuer;
  ProxyHarness p;
};

TEST_F(ClientTokens, AGoodTokenIsForwardedAndItsRolesPickTheRule) {
  const auto writer = call(sign_jwt(key_a(), claims({"Writer"})));
  EXPECT_EQ(writer.status, 200u) << writer.body;
  EXPECT_EQ(writer.body, R"({"from":"a"})");
  EXPECT_EQ(a.last_request().header("api-key"), "upstream-key-a") << "the backend gets its own key";
  EXPECT_EQ(a.last_request().header("authorization"), "") << "the client's token is not forwarded";
  EXPECT_EQ(call(sign_jwt(key_a(), claims({"Reader"}))).body, R"({"from":"b"})");
  // Keys still work beside tokens.
  EXPECT_EQ(http_call(p.port(), "POST", kPath, {{"api-key", "batch-key-123"}}, "{}").body, R"({"from":"b"})");
}

// A token's subjects choose budgets as a key's do; per-caller budgets are per user (its oid).
TEST_F(ClientTokens, EachUserWithARoleHasABudgetOfItsOwn) {
  auto bob = claims({"Trial"});
  bob["oid"] = "oid-bob";
  EXPECT_EQ(call(sign_jwt(key_a(), claims({"Trial"}))).status, 200u);
  const auto again = call(sign_jwt(key_a(), claims({"Trial"})));
  EXPECT_EQ(again.status, 429u);
  EXPECT_NE(again.body.find("subject 'role:Trial'"), std::string::npos) << again.body;
  EXPECT_EQ(call(sign_jwt(key_a(), bob)).status, 200u) << "another user: another budget";
  EXPECT_EQ(call(sign_jwt(key_a(), claims({"Writer"}))).status, 200u) << "without the role: no budget";
}

TEST_F(ClientTokens, ABadTokenIs401BeforeTheBodyAndNeverReachesABackend) {
  auto expired = claims({"Writer"});
  expired["exp"] = expired["nbf"].get<long long>() - 3600;
  auto foreign = claims({"Writer"});
  foreign["aud"] = "api://someone-else";
  const std::string good = sign_jwt(key_a(), claims({"Writer"}));
  const struct {
    std::string token, says;
  } cases[] = {
      {sign_jwt(key_a(), expired), "expired"},
      {sign_jwt(key_a(), foreign), "another audience"},
      {sign_jwt(key_b(), claims({"Writer"}), "key-a"), "signature is not valid"},
      {unsigned_jwt({{"alg", "none"}, {"kid", "key-a"}}, claims({"Writer"})) + ".", "algorithm"},
      {good.substr(0, good.size() - 4) + "AAAA", "signature is not valid"},
  };
  for (const auto& c : cases) {
    const auto r = call(c.token);
    EXPECT_EQ(r.status, 401u) << c.says;
    const auto body = nlohmann::json::parse(r.body);
    EXPECT_EQ(body["error"]["code"], "invalid_token") << c.says;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.says), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find(c.token.substr(0, 20)), std::string::npos) << "never echoes the token";
    EXPECT_EQ(r.header("www-authenticate"), "Bearer error=\"invalid_token\"");
  }
  // The head alone (the body never sent) is answered: the body is not waited for.
  RawConnection raw(p.port());
  raw.send("POST " + kPath + " HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nAuthorization: Bearer " +
           sign_jwt(key_a(), expired) + "\r\n\r\n");
  EXPECT_NE(raw.read_until("\r\n\r\n").find("HTTP/1.1 401"), std::string::npos);
  EXPECT_EQ(a.request_count() + b.request_count(), 0u);
}

TEST_F(ClientTokens, AnUnknownKidFetchesTheKeysOnceThenPasses) {
  ASSERT_EQ(call(sign_jwt(key_a(), claims({"Writer"}))).status, 200u);  // the keys are in
  const int fetched = issuer.discovery_fetches();
  issuer.publish({&key_a(), &key_b()});  // the tenant rotates a new key in
  const auto rotated = call(sign_jwt(key_b(), claims({"Writer"})));
  EXPECT_EQ(rotated.status, 200u) << rotated.body;
  EXPECT_EQ(issuer.discovery_fetches(), fetched + 1);
  // Another unknown kid within the minute: refused at once, no fetch.
  const auto unknown = call(sign_jwt(key_b(), claims({"Writer"}), "key-c"));
  EXPECT_EQ(unknown.status, 401u);
  EXPECT_NE(unknown.body.find("a key its issuer does not publish"), std::string::npos) << unknown.body;
  EXPECT_EQ(issuer.discovery_fetches(), fetched + 1);
}

}  // namespace client_tokens_test
}  // namespace smartlb::testing
