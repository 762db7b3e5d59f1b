// Failover over real sockets: throttling, server errors, refused connections, timeouts,
// priority fallback and return, and the answer when nothing is left.
#include <gtest/gtest.h>

#include <atomic>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "refusing_port.hpp"

namespace smartlb::testing {
namespace failover_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
const std::string kBody = R"({"messages":[{"role":"user","content":"hi"}]})";

MockReply ok(const std::string& who) {
  return {200, {{"content-type", "application/json"}}, R"({"served_by":")" + who + R"("})"};
}
MockReply status(unsigned s, Headers h = {}) { return {s, h, R"({"error":{"message":"nope"}})"}; }

HttpResponse post(ProxyHarness& p, const std::string& target = kChat) {
  return http_call(p.port(), "POST", target, {{"content-type", "application/json"}, {"api-key", "client"}},
                   kBody);
}

TEST(Failover, Throttled429FailsOverAtOnceAndIsSkippedUntilItsDeadline) {
  MockBackend primary([](const SeenRequest&) { return status(429, {{"retry-after", "5"}}); });
  MockBackend secondary([](const SeenRequest&) { return ok("secondary"); });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();

  auto r1 = post(p);
  EXPECT_EQ(r1.status, 200u);
  EXPECT_EQ(r1.header("x-smartlb-backend"), "secondary");
  EXPECT_EQ(primary.request_count(), 1u);
  EXPECT_EQ(secondary.request_count(), 1u);
  EXPECT_EQ(primary.last_request().body, kBody) << "the same body is replayed";
  EXPECT_EQ(secondary.last_request().body, kBody);

  auto r2 = post(p);
  EXPECT_EQ(r2.header("x-smartlb-backend"), "secondary");
  EXPECT_EQ(primary.request_count(), 1u) << "a cooling backend gets no traffic";

  p.clock.advance(5s);
  primary.set_handler([](const SeenRequest&) { return ok("primary"); });
  auto r3 = post(p);
  EXPECT_EQ(r3.header("x-smartlb-backend"), "primary") << "back to priority 1 at the deadline";
  EXPECT_EQ(primary.request_count(), 2u);
}

TEST(Failover, ServerErrorsFailOver) {
  for (unsigned code : {500u, 502u, 503u, 504u}) {
    MockBackend bad([code](const SeenRequest&) { return status(code); });
    MockBackend good([](const SeenRequest&) { return ok("good"); });
    ProxyHarness p;
    p.add_backend("bad", bad.url(), 1);
    p.add_backend("good", good.url(), 2);
    p.start();
    auto r = post(p);
    EXPECT_EQ(r.status, 200u) << code;
    EXPECT_EQ(r.header("x-smartlb-backend"), "good") << code;
    EXPECT_EQ(bad.request_count(), 1u) << code;
  }
}

// Counts the host-name lookups of backend 0 (called from worker threads).
class LookupCounter final : public telemetry::RequestObserver {
 public:
  void on_request(const telemetry::RequestRecord&) override {}
  void on_dns_lookup(std::size_t backend, bool ok) override {
    if (backend == 0 && ok) ++lookups_;
  }
  int lookups() const { return lookups_.load(); }

 private:
  std::atomic<int> lookups_{0};
};

// A priority-1 backend at `host` that refuses connections, a priority-2 one that answers;
// backend 0's host name is looked up `expected_lookups` times for the one request.
void expect_refusing_backend_fails_over(const std::string& host, int expected_lookups) {
  const RefusingPort down;
  MockBackend good([](const SeenRequest&) { return ok("good"); });
  ProxyHarness p;
  LookupCounter counter;
  p.add_backend("down", "http://" + host + ":" + std::to_string(down.port()), 1);
  p.add_backend("good", good.url(), 2);
  p.start(&counter);
  auto r = post(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "good");
  EXPECT_FALSE(p.available(0, "gpt-4o"));
  EXPECT_EQ(p.backend_cooldown(0).cause, routing::FailureCause::ConnectFailed);
  EXPECT_EQ(counter.lookups(), expected_lookups);
}

TEST(Failover, ConnectionRefusedFailsOver) {
  expect_refusing_backend_fails_over("127.0.0.1", 0);  // an IP literal is never looked up
}

TEST(Failover, HostNameBackendConnectsAgainFromItsResolvedAddresses) {
  // `connection: close` on every answer: each request needs a new upstream connection, the
  // first one resolved, the next ones from the cached addresses.
  MockBackend named([](const SeenRequest&) {
    MockReply r;
    r.raw =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
        "content-length: 2\r\n\r\n{}";
    return r;
  });
  ProxyHarness p;
  p.cfg.threads = 1;  // each worker keeps its own addresses: one worker, one lookup
  LookupCounter counter;
  p.add_backend("named", "http://localhost:" + std::to_string(named.port()), 1);
  p.start(&counter);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(post(p).status, 200u) << "request " << i;
  ASSERT_EQ(named.request_count(), 3u);
  EXPECT_EQ(named.last_request().connection_index, 3) << "one connection per request";
  EXPECT_EQ(counter.lookups(), 1) << "three connections from one lookup";
}

TEST(Failover, HostNameBackendRefusingOnEveryAddressFailsOver) {
  // The name is looked up again after the refusal; it gives the same addresses, so there is
  // no second connect, and the backend is cooled down like any refusing one.
  expect_refusing_backend_fails_over("localhost", 2);
}

TEST(Failover, TimeoutBeforeHeadersFailsOver) {
  MockBackend slow([](const SeenRequest&) { return ok("slow"); });
  auto never = slow.make_gate();
  slow.set_handler([never](const SeenRequest&) {
    MockReply r = ok("slow");
    r.hold_headers = never;
    return r;
  });
  MockBackend good([](const SeenRequest&) { return ok("good"); });
  ProxyHarness p;
  p.cfg.http_timeout = 1s;
  p.add_backend("slow", slow.url(), 1);
  p.add_backend("good", good.url(), 2);
  p.start();
  auto r = post(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "good");
  EXPECT_EQ(p.backend_cooldown(0).cause, routing::FailureCause::Timeout);
  slow.open(never);
}

TEST(Failover, AnAnswerWhoseBodyNeverComesAfterItsHeadFailsOver) {
  // A head that promises a JSON body, then silence: nothing reached the client (the head of an
  // answer that is not an event stream waits for its body), so the next backend answers.
  MockBackend silent([](const SeenRequest&) {
    MockReply r;
    r.raw = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n";
    return r;
  });
  MockBackend good([](const SeenRequest&) { return ok("good"); });
  ProxyHarness p;
  p.cfg.http_timeout = 1s;
  p.add_backend("silent", silent.url(), 1);
  p.add_backend("good", good.url(), 2);
  p.start();
  const auto r = post(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "good");
  EXPECT_EQ(nlohmann::json::parse(r.body)["served_by"], "good");
  EXPECT_EQ(p.backend_cooldown(0).cause, routing::FailureCause::Timeout);
}

TEST(Failover, ClientErrorPassesThroughWithoutFailoverOrCooldown) {
  MockBackend primary([](const SeenRequest&) { return status(400); });
  MockBackend secondary([](const SeenRequest&) { return ok("secondary"); });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  auto r = post(p);
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, R"({"error":{"message":"nope"}})");
  EXPECT_EQ(secondary.request_count(), 0u);
  EXPECT_TRUE(p.available(0, "gpt-4o"));
}

TEST(Failover, AuthRejectionFailsOverAndCoolsTheWholeBackend) {
  MockBackend primary([](const SeenRequest&) { return status(401); });
  MockBackend secondary([](const SeenRequest&) { return ok("secondary"); });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1, 1, "wrong-key");
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  auto r = post(p);
  EXPECT_EQ(r.header("x-smartlb-backend"), "secondary");
  EXPECT_EQ(p.backend_cooldown(0).cause, routing::FailureCause::AuthRejected);
  EXPECT_FALSE(p.available(0, "another-deployment"));
}

TEST(Failover, CooldownIsPerDeployment) {
  MockBackend primary([](const SeenRequest& s) {
    return s.target.find("/gpt-4o/") != std::string::npos ? status(429, {{"retry-after", "30"}})
                                                          : ok("primary");
  });
  MockBackend secondary([](const SeenRequest&) { return ok("secondary"); });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  EXPECT_EQ(post(p).header("x-smartlb-backend"), "secondary");
  auto other = post(p, "/openai/deployments/embed/embeddings?api-version=1");
  EXPECT_EQ(other.header("x-smartlb-backend"), "primary") << "another deployment is not blocked";
}

TEST(Failover, AllThrottledAnswers429WithTheSoonestRecovery) {
  MockBackend a([](const SeenRequest&) { return status(429, {{"retry-after", "9"}}); });
  MockBackend b([](const SeenRequest&) { return status(429, {{"retry-after-ms", "2500"}}); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  auto r = post(p);
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(r.header("retry-after-ms"), "2500");
  EXPECT_EQ(r.header("retry-after"), "3");
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["error"]["code"], "rate_limit_exceeded");
  EXPECT_TRUE(body["error"]["message"].get<std::string>().find("gpt-4o") != std::string::npos);
  EXPECT_EQ(a.request_count(), 1u) << "each backend at most once per request";
  EXPECT_EQ(b.request_count(), 1u);

  // While everything cools, the proxy answers at once without touching a backend.
  p.clock.advance(1s);
  auto r2 = post(p);
  EXPECT_EQ(r2.status, 429u);
  EXPECT_EQ(r2.header("retry-after-ms"), "1500");
  EXPECT_EQ(a.request_count() + b.request_count(), 2u);
}

TEST(Failover, AllFailingWithServerErrorsAnswers502) {
  MockBackend a([](const SeenRequest&) { return status(503, {{"retry-after", "4"}}); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  const RefusingPort down;
  p.add_backend("down", down.url(), 1);
  p.start();
  auto r = post(p);
  EXPECT_EQ(r.status, 502u);
  EXPECT_EQ(r.header("retry-after-ms"), "4000");
  auto again = post(p);
  EXPECT_EQ(again.status, 503u) << "nothing was attempted: no backend is available";
}

TEST(Failover, AModelNoBackendHas_Is404NamingItNot502) {
  // An OpenAI-style request names its model in the body; each backend answers 404 for it.
  MockBackend a([](const SeenRequest&) { return status(404); });
  MockBackend b([](const SeenRequest&) { return status(404); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  const std::string v1 = "/v1/chat/completions";
  const std::string body = R"({"model":"gpt-5","messages":[{"role":"user","content":"hi"}]})";
  const auto r = http_call(p.port(), "POST", v1, {{"content-type", "application/json"}}, body);
  EXPECT_EQ(r.status, 404u);
  const auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["error"]["code"], "model_not_found");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("'gpt-5'"), std::string::npos);
  EXPECT_TRUE(r.header("retry-after").empty()) << "retrying would not help";
  EXPECT_EQ(a.request_count() + b.request_count(), 2u) << "each backend was asked once";
  const auto again = http_call(p.port(), "POST", v1, {{"content-type", "application/json"}}, body);
  EXPECT_EQ(again.status, 404u) << "while they cool down, still the honest answer";
  EXPECT_EQ(a.request_count() + b.request_count(), 2u);
}

TEST(Failover, StaleKeepAliveConnectionIsRetriedWithoutBlame) {
  // The backend drops the second request on a kept-alive connection without a byte, as a
  // server does when its idle timeout races our reuse.
  MockBackend backend([](const SeenRequest& s) {
    MockReply r = ok("backend");
    if (s.request_on_connection == 2) r.close_without_reply = true;
    return r;
  });
  MockBackend other([](const SeenRequest&) { return ok("other"); });
  ProxyHarness p;
  p.cfg.threads = 1;  // one pool, so the second request reuses the first connection
  p.add_backend("backend", backend.url(), 1);
  p.add_backend("other", other.url(), 2);
  p.start();
  EXPECT_EQ(post(p).header("x-smartlb-backend"), "backend");
  auto r = post(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "backend") << "retried on a fresh connection";
  EXPECT_TRUE(p.available(0, "gpt-4o")) << "not counted against the backend";
  EXPECT_EQ(other.request_count(), 0u);
}

}  // namespace failover_test
}  // namespace smartlb::testing
