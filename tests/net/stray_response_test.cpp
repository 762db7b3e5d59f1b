// A backend that writes bytes nobody asked for on a kept-alive connection (a buggy or
// compromised upstream, a late duplicate answer) must never get them to a client: any byte
// that arrives on an idle pooled connection retires it, whatever time it has been idle.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "backend_over.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace stray_response_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";

// A complete second response, as a confused backend would send it.
const std::string kStray =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n"
    R"({"for":"stray"})"
    "\n";

// Answers each request with the marker it carried, then writes kStray 50 ms later.
MockReply answer_then_stray(const SeenRequest& s) {
  MockReply r{200, {{"content-type", "application/json"}}, R"({"for":")" + s.header("x-marker") + R"("})"};
  r.stray = kStray;
  r.stray_after = 50ms;
  return r;
}

HttpResponse ask(ProxyHarness& p, const std::string& marker) {
  return http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}, {"x-marker", marker}},
                   R"({"messages":[]})");
}

// Each request waits until the previous answer's stray has reached smartlb's pooled
// connection, so every reuse meets one (the manual clock never moves: the connection has been
// idle for "0 s", which the pool used to trust without a look).
void expect_every_answer_is_its_own(ProxyHarness& p, MockBackend& backend, int rounds) {
  for (int i = 1; i <= rounds; ++i) {
    const std::string marker = "request-" + std::to_string(i);
    const HttpResponse r = ask(p, marker);
    EXPECT_EQ(r.status, 200u) << marker;
    EXPECT_EQ(r.body, R"({"for":")" + marker + R"("})") << "a client got another exchange's response";
    ASSERT_TRUE(backend.wait_for_strays(static_cast<std::size_t>(i)));
  }
  const auto seen = backend.requests();
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(rounds)) << "no request is sent twice";
  for (const auto& s : seen)
    EXPECT_EQ(s.request_on_connection, 1) << "a connection that sent a stray is never reused";
}

TEST(StrayResponse, BytesOnAnIdlePooledConnectionRetireIt) {
  MockBackend backend(answer_then_stray);
  ProxyHarness p;
  p.cfg.threads = 1;  // one pool, so every request would reuse the same connection
  p.add_backend("backend", backend.url(), 1);
  p.start();
  expect_every_answer_is_its_own(p, backend, 5);
  EXPECT_TRUE(p.available(0, "gpt-4o")) << "a retired connection does not cool the backend";
}

TEST(StrayResponse, BytesOnAnIdlePooledTlsConnectionRetireIt) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  MockBackend backend(answer_then_stray, &identity);
  ProxyHarness p;
  p.cfg.threads = 1;
  const std::string ca_file = ca.write_cert_file();
  p.cfg.upstream_ca_file = ca_file;
  p.add_backend("backend", backend.url(), 1, 1, "k");
  p.start();
  expect_every_answer_is_its_own(p, backend, 3);
  std::remove(ca_file.c_str());
}

// The FIN came with the response's last bytes: no later event tells the pool, so the next
// request may go out on it; its answer's read must find the end at once (and the request go
// on a new connection), not wait for an event that never comes (HTTP_TIMEOUT_SECONDS).
void expect_a_connection_closed_with_its_answer_is_not_waited_on(bool tls) {
  BackendOver b(tls, [](const SeenRequest& s) {
    MockReply r{200, {}, R"({"for":")" + s.header("x-marker") + R"("})"};
    r.half_close_after = true;
    return r;
  });
  ProxyHarness p;
  p.cfg.threads = 1;
  p.cfg.http_timeout = 2s;  // a wait that never ends would end here, as a 504
  p.cfg.request_timeout = 2s;
  b.add_to(p);
  p.start();
  for (int i = 1; i <= 3; ++i) {
    const HttpResponse r = ask(p, std::to_string(i));
    EXPECT_EQ(r.status, 200u) << i;
    EXPECT_EQ(r.body, R"({"for":")" + std::to_string(i) + R"("})");
  }
  EXPECT_TRUE(p.available(0, "gpt-4o")) << "a connection the backend ended is not the backend's failure";
}

TEST(StrayResponse, APooledConnectionWhoseBackendClosedWithItsAnswerIsNotWaitedOn) {
  expect_a_connection_closed_with_its_answer_is_not_waited_on(false);
}

TEST(StrayResponse, APooledTlsConnectionWhoseBackendClosedWithItsAnswerIsNotWaitedOn) {
  expect_a_connection_closed_with_its_answer_is_not_waited_on(true);
}

// The check must not cost the pool its point: without strays, one connection serves all (over
// TLS too, where the look at a quiet connection costs no syscall either: io/tls_socket.hpp).
void expect_a_quiet_pooled_connection_is_reused(bool tls) {
  BackendOver b(tls, [](const SeenRequest& s) {
    return MockReply{200, {}, R"({"for":")" + s.header("x-marker") + R"("})"};
  });
  ProxyHarness p;
  p.cfg.threads = 1;
  b.add_to(p);
  p.start();
  for (int i = 1; i <= 3; ++i)
    EXPECT_EQ(ask(p, std::to_string(i)).body, R"({"for":")" + std::to_string(i) + R"("})");
  const auto seen = b.backend.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen.back().request_on_connection, 3);
}

TEST(StrayResponse, QuietPooledConnectionIsStillReused) { expect_a_quiet_pooled_connection_is_reused(false); }

TEST(StrayResponse, AQuietPooledTlsConnectionIsStillReused) {
  expect_a_quiet_pooled_connection_is_reused(true);
}

}  // namespace stray_response_test
}  // namespace smartlb::testing
