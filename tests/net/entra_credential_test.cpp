// Backends with `auth: entra` over real sockets: a mock token endpoint (the v2.0 client
// credentials grant) and mock backends that demand its bearer token.
#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <condition_variable>

#include <cstdio>
#include <memory>
#include <mutex>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace entra_credential_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
const std::string kBody = R"({"messages":[{"role":"user","content":"hi"}]})";
const std::string kToken = "eyJ0eXAiOiJKV1QifQ.test-token.sig";

MockReply token_answer() {
  return {200,
          {{"content-type", "application/json"}},
          R"({"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":")" + kToken +
              R"("})"};
}

// A backend that serves only requests carrying the token.
MockBackend::Handler demands_token(const std::string& who) {
  return [who](const SeenRequest& r) {
    if (r.header("authorization") != "Bearer " + kToken || r.has_header("api-key"))
      return MockReply{401, {{"content-type", "application/json"}}, R"({"error":{"code":"401"}})"};
    return MockReply{200, {{"content-type", "application/json"}}, R"({"served_by":")" + who + R"("})"};
  };
}

config::BackendConfig& add_entra_backend(ProxyHarness& p, const std::string& name, const std::string& url,
                                         const MockBackend& token_endpoint, int priority = 1) {
  config::BackendConfig& b = p.add_backend(name, url, priority);
  b.auth = config::AuthStyle::Entra;
  b.entra.source = config::EntraSource::ClientSecret;
  b.entra.tenant_id = "contoso-tenant";
  b.entra.client_id = "app-client-id";
  b.entra.client_secret = "the-client-secret";
  b.entra.authority_host = token_endpoint.url() + "/";
  return b;
}

HttpResponse post(ProxyHarness& p) {
  return http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}, {"api-key", "client-key"}},
                   kBody);
}

TEST(EntraCredential, RequestCarriesTheBearerTokenInsteadOfAnyKey) {
  MockBackend token([](const SeenRequest&) { return token_answer(); });
  MockBackend backend(demands_token("east"));
  ProxyHarness p;
  add_entra_backend(p, "east", backend.url(), token);
  p.start();

  const auto r = post(p);
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.header("x-smartlb-backend"), "east");
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer " + kToken);
  EXPECT_FALSE(backend.last_request().has_header("api-key")) << "the client's key never goes upstream";

  ASSERT_EQ(token.request_count(), 1u);
  const SeenRequest t = token.last_request();
  EXPECT_EQ(t.method, "POST");
  EXPECT_EQ(t.target, "/contoso-tenant/oauth2/v2.0/token");
  EXPECT_EQ(t.header("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(t.body,
            "grant_type=client_credentials&client_id=app-client-id"
            "&scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default&client_secret=the-client-secret");

  EXPECT_EQ(post(p).status, 200u);
  EXPECT_EQ(token.request_count(), 1u) << "the token is cached";
}

// Counts requests that started (so a test can let the token answer go once all wait) and
// credential refreshes.
class CountingObserver final : public telemetry::RequestObserver {
 public:
  void on_request_start() override {
    std::lock_guard lock(mutex_);
    ++started_;
    cv_.notify_all();
  }
  void on_request(const telemetry::RequestRecord&) override {}
  void on_credential_refresh(const std::string& backend, bool ok) override {
    std::lock_guard lock(mutex_);
    refreshes_.push_back(backend + (ok ? ":ok" : ":failed"));
    cv_.notify_all();
  }
  bool await_refreshes(std::size_t n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 60s, [&] { return refreshes_.size() >= n; });
  }
  bool await_started(std::size_t n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 60s, [&] { return started_ >= n; });
  }
  std::vector<std::string> refreshes() {
    std::lock_guard lock(mutex_);
    return refreshes_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t started_ = 0;
  std::vector<std::string> refreshes_;
};

TEST(EntraCredential, ConcurrentFirstRequestsCauseOneTokenRequest) {
  constexpr std::size_t kRequests = 1000;
  MockBackend token([](const SeenRequest&) { return token_answer(); });
  const GatePtr gate = token.make_gate();
  token.set_handler([gate](const SeenRequest&) {
    MockReply r = token_answer();
    r.hold_headers = gate;
    return r;
  });
  MockBackend backend(demands_token("east"));
  CountingObserver counter;  // outlives the server: its credential thread reports to it
  ProxyHarness p;
  add_entra_backend(p, "east", backend.url(), token);
  p.start(&counter);

  std::vector<std::unique_ptr<RawConnection>> clients;
  const std::string request =
      "POST " + kChat + " HTTP/1.1\r\nHost: smartlb\r\nContent-Type: application/json\r\nContent-Length: " +
      std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  for (std::size_t i = 0; i < kRequests; ++i) {
    clients.push_back(std::make_unique<RawConnection>(p.port()));
    clients.back()->send(request);
  }
  ASSERT_TRUE(counter.await_started(kRequests));
  ASSERT_TRUE(token.wait_for_requests(1));
  token.open(gate);
  std::size_t ok = 0;
  for (auto& c : clients)
    if (c->read_until("served_by").find("HTTP/1.1 200") == 0) ++ok;
  EXPECT_EQ(ok, kRequests);
  EXPECT_EQ(token.request_count(), 1u) << "one token request for every waiting request";
  ASSERT_TRUE(counter.await_refreshes(1));
  EXPECT_EQ(counter.refreshes(), std::vector<std::string>{"east:ok"});
}

TEST(EntraCredential, FailingTokenEndpointFailsOverWithCauseCredential) {
  MockBackend token([](const SeenRequest&) {
    return MockReply{
        401,
        {{"content-type", "application/json"}},
        R"({"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret."})"};
  });
  MockBackend entra_backend(demands_token("east"));
  MockBackend keyed([](const SeenRequest&) {
    return MockReply{200, {{"content-type", "application/json"}}, R"({"served_by":"west"})"};
  });
  LastRecord last;  // outlives the server: its credential thread reports to it
  ProxyHarness p;
  add_entra_backend(p, "east", entra_backend.url(), token, 1);
  p.add_backend("west", keyed.url(), 2, 1, "west-key");
  p.start(&last);

  const auto r = post(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "west");
  EXPECT_EQ(entra_backend.request_count(), 0u) << "nothing is sent without a token";
  const auto rec = last.await();
  ASSERT_TRUE(rec);
  ASSERT_GE(rec->attempt_count, 2u);
  EXPECT_EQ(rec->attempts[0].cause, routing::FailureCause::Credential);
  EXPECT_GT(rec->attempts[0].cooldown_ms, 0);
  EXPECT_GT(p.backend_cooldown(0).until, p.clock.now()) << "the whole backend cools down";
  EXPECT_FALSE(p.available(0, "gpt-4o"));

  // The status says why, and never holds a secret.
  const auto status = p.server->credentials();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].state, "unavailable");
  EXPECT_NE(status[0].last_error.find("invalid_client"), std::string::npos);
  EXPECT_EQ(status[0].last_error.find("the-client-secret"), std::string::npos);
  EXPECT_EQ(status[0].backends, std::vector<std::string>{"east"});
}

TEST(EntraCredential, HttpsTokenEndpointIsVerified) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  const auto impostor_identity = ca.issue("login.example");
  MockBackend token([](const SeenRequest&) { return token_answer(); }, &identity);
  MockBackend impostor([](const SeenRequest&) { return token_answer(); }, &impostor_identity);
  MockBackend backend(demands_token("east"));
  MockBackend other_backend(demands_token("north"));
  ProxyHarness p;
  const std::string ca_file = ca.write_cert_file();
  p.cfg.upstream_ca_file = ca_file;
  add_entra_backend(p, "east", backend.url(), token);
  // A certificate for another name: no secret is sent, and the backend fails over.
  config::BackendConfig& north = add_entra_backend(p, "north", other_backend.url(), impostor, 1);
  north.entra.client_id = "north-client-id";
  p.start();

  for (int i = 0; i < 4; ++i) EXPECT_EQ(post(p).header("x-smartlb-backend"), "east");
  EXPECT_EQ(token.request_count(), 1u);
  EXPECT_EQ(impostor.request_count(), 0u);
  EXPECT_EQ(other_backend.request_count(), 0u);
  for (const auto& c : p.server->credentials()) {
    if (c.backends == std::vector<std::string>{"north"}) {
      EXPECT_EQ(c.state, "unavailable");
      EXPECT_NE(c.last_error.find("TLS handshake"), std::string::npos) << c.last_error;
    } else {
      EXPECT_EQ(c.state, "valid");
    }
  }
  std::remove(ca_file.c_str());
}

TEST(EntraCredential, ImdsIsAskedWithMetadataHeaderAndUserAssignedClientId) {
  MockBackend imds([](const SeenRequest&) {
    return MockReply{
        200,
        {{"content-type", "application/json"}},
        R"({"access_token":")" + kToken +
            R"(","refresh_token":"","expires_in":"86399","expires_on":"1900000000",)"
            R"("not_before":"1","resource":"https://cognitiveservices.azure.com","token_type":"Bearer"})"};
  });
  MockBackend backend(demands_token("east"));
  ProxyHarness p;
  config::BackendConfig& b = p.add_backend("east", backend.url());
  b.auth = config::AuthStyle::Entra;
  b.entra.source = config::EntraSource::Imds;
  b.entra.client_id = "uami-client-id";
  b.entra.imds_endpoint = imds.url() + "/metadata/identity/oauth2/token";
  p.start();
  EXPECT_EQ(post(p).status, 200u);
  ASSERT_EQ(imds.request_count(), 1u);
  const SeenRequest t = imds.last_request();
  EXPECT_EQ(t.method, "GET");
  EXPECT_EQ(t.target,
            "/metadata/identity/oauth2/token?api-version=2018-02-01"
            "&resource=https%3A%2F%2Fcognitiveservices.azure.com&client_id=uami-client-id");
  EXPECT_EQ(t.header("metadata"), "true");
}

TEST(EntraCredential, WorkloadIdentityRefreshesAheadAndRereadsTheTokenFile) {
  char path[] = "/tmp/smartlb-federated-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const auto write_file = [&](const std::string& text) {
    std::FILE* f = std::fopen(path, "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  write_file("federated-1");
  // A token of 4 s is refreshed at half-life: 2 s later, in the background.
  MockBackend token([](const SeenRequest&) {
    return MockReply{200,
                     {{"content-type", "application/json"}},
                     R"({"token_type":"Bearer","expires_in":4,"access_token":")" + kToken + R"("})"};
  });
  MockBackend backend(demands_token("east"));
  ProxyHarness p;
  config::BackendConfig& b = add_entra_backend(p, "east", backend.url(), token);
  b.entra.source = config::EntraSource::WorkloadIdentity;
  b.entra.client_secret.clear();
  b.entra.federated_token_file = path;
  p.start();
  EXPECT_EQ(post(p).status, 200u);
  ASSERT_TRUE(token.wait_for_requests(1));
  EXPECT_TRUE(token.requests()[0].body.ends_with("&client_assertion=federated-1"))
      << token.requests()[0].body;
  write_file("federated-2");  // the platform rotated it
  ASSERT_TRUE(token.wait_for_requests(2));
  EXPECT_TRUE(token.requests()[1].body.ends_with("&client_assertion=federated-2"))
      << token.requests()[1].body;
  EXPECT_NE(token.requests()[1].body.find(
                "&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer"),
            std::string::npos);
  EXPECT_EQ(backend.request_count(), 1u) << "the refresh came from the background, not a request";
  std::remove(path);
}

TEST(EntraCredential, ARejectedTokenIsReplaced) {
  std::atomic<int> issued{0};
  MockBackend token([&](const SeenRequest&) {
    const std::string t = "token-" + std::to_string(++issued);
    return MockReply{200,
                     {{"content-type", "application/json"}},
                     R"({"token_type":"Bearer","expires_in":3599,"access_token":")" + t + R"("})"};
  });
  // Accepts only the second token: the first was revoked.
  MockBackend backend([](const SeenRequest& r) {
    if (r.header("authorization") != "Bearer token-2")
      return MockReply{401, {}, R"({"error":{"code":"401"}})"};
    return MockReply{200, {{"content-type", "application/json"}}, R"({"served_by":"east"})"};
  });
  CountingObserver observer;  // outlives the server: its credential thread reports to it
  ProxyHarness p;
  add_entra_backend(p, "east", backend.url(), token);
  p.start(&observer);
  // The first 401 asks for a new token, but the last fetch was just now: not before a minute.
  EXPECT_EQ(post(p).status, 502u);
  EXPECT_EQ(token.request_count(), 1u);
  p.clock.advance(61s);  // past the backend's cooldown, and a minute after the fetch
  EXPECT_EQ(post(p).status, 502u);
  ASSERT_TRUE(observer.await_refreshes(2)) << "the 401 asked for a new token";
  p.clock.advance(11s);  // past the backend's cooldown
  const auto r = post(p);
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer token-2");
}

TEST(EntraCredential, BackendsWithTheSameCredentialShareOneToken) {
  MockBackend token([](const SeenRequest&) { return token_answer(); });
  MockBackend east(demands_token("east"));
  MockBackend west(demands_token("west"));
  ProxyHarness p;
  add_entra_backend(p, "east", east.url(), token);
  add_entra_backend(p, "west", west.url(), token);
  p.start();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(post(p).status, 200u);
  EXPECT_EQ(token.request_count(), 1u);
  const auto status = p.server->credentials();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].backends, (std::vector<std::string>{"east", "west"}));
}

}  // namespace entra_credential_test
}  // namespace smartlb::testing
