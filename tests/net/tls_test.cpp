// HTTPS backends: a certificate from a CA made for this test is trusted through
// UPSTREAM_CA_FILE; a certificate for another host is refused and the request fails over.
#include <gtest/gtest.h>

#include <cstdio>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace {

TEST(Tls, HttpsBackendWithTrustedCertificate) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "secure"}; }, &identity);
  ProxyHarness p;
  const std::string ca_file = ca.write_cert_file();
  p.cfg.upstream_ca_file = ca_file;
  p.add_backend("tls", backend.url(), 1, 1, "k");
  p.start();
  auto r = http_call(p.port(), "POST", "/openai/deployments/d/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "secure");
  EXPECT_EQ(backend.last_request().header("host"), "localhost:" + std::to_string(backend.port()));
  // A second request reuses the pooled TLS connection.
  auto r2 = http_call(p.port(), "POST", "/openai/deployments/d/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r2.body, "secure");
  std::remove(ca_file.c_str());
}

TEST(Tls, WrongHostCertificateIsRefused) {
  TestCa ca;
  const auto wrong = ca.issue("wrong.example");
  MockBackend impostor([](const SeenRequest&) { return MockReply{200, {}, "impostor"}; }, &wrong);
  MockBackend fallback([](const SeenRequest&) { return MockReply{200, {}, "fallback"}; });
  ProxyHarness p;
  const std::string ca_file = ca.write_cert_file();
  p.cfg.upstream_ca_file = ca_file;
  p.add_backend("impostor", impostor.url(), 1, 1, "secret-key");
  p.add_backend("fallback", fallback.url(), 2);
  p.start();
  auto r = http_call(p.port(), "POST", "/openai/deployments/d/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r.body, "fallback");
  EXPECT_EQ(impostor.request_count(), 0u) << "nothing, and no key, is sent to an unverified peer";
  EXPECT_EQ(p.backend_cooldown(0).cause, routing::FailureCause::TlsFailed);
  std::remove(ca_file.c_str());
}

TEST(Tls, UnknownCaIsRefused) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "untrusted"}; }, &identity);
  ProxyHarness p;  // no UPSTREAM_CA_FILE: the test CA is not trusted
  p.add_backend("tls", backend.url());
  p.start();
  auto r = http_call(p.port(), "POST", "/openai/deployments/d/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r.status, 502u);
  EXPECT_EQ(backend.request_count(), 0u);
}

}  // namespace
}  // namespace smartlb::testing
