// HTTPS backends: a certificate from a CA made for this test is trusted through
// UPSTREAM_CA_FILE; a certificate for another host is refused and the request fails over. A
// WebSocket session to such a backend relays both ways.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cstdio>
#include <thread>

#include "backend_over.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "websocket_sim.hpp"

namespace smartlb::testing {
namespace tls_test {  // named, not anonymous: tests/CMakeLists.txt

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

// A WebSocket backend over TLS, on its own thread: answers one upgrade, then sends each message
// back as it came, until the close.
class TlsWebSocketEcho {
 public:
  explicit TlsWebSocketEcho(const MockBackend::TlsIdentity& identity) {
    tls_.use_certificate_chain(asio::buffer(identity.cert_pem));
    tls_.use_private_key(asio::buffer(identity.key_pem), asio::ssl::context::pem);
    asio::co_spawn(io_, serve(), asio::detached);  // its errors (the close) end it quietly
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TlsWebSocketEcho() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::awaitable<void> serve() {
    websocket::stream<beast::ssl_stream<asio::ip::tcp::socket>> ws(
        co_await acceptor_.async_accept(asio::use_awaitable), tls_);
    co_await ws.next_layer().async_handshake(asio::ssl::stream_base::server, asio::use_awaitable);
    co_await ws.async_accept(asio::use_awaitable);
    for (;;) {
      beast::flat_buffer message;
      co_await ws.async_read(message, asio::use_awaitable);
      ws.text(ws.got_text());
      co_await ws.async_write(message.data(), asio::use_awaitable);
    }
  }

  asio::io_context io_;
  asio::ssl::context tls_{asio::ssl::context::tls_server};
  asio::ip::tcp::acceptor acceptor_{io_, {asio::ip::address_v4::loopback(), 0}};
  std::thread thread_;
};

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

// A backend that ends each connection with its answer: every request needs a new connection,
// and each after the first resumes the session the last one was given (no certificate sent or
// checked again), as nginx and haproxy do.
TEST(Tls, ANewConnectionResumesTheBackendsLastSession) {
  BackendOver b(true, [](const SeenRequest&) {
    MockReply r{200, {}, "secure"};
    r.half_close_after = true;
    return r;
  });
  ProxyHarness p;
  p.cfg.threads = 1;  // one pool, so one backend's sessions are in one place
  b.add_to(p);
  p.start();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(
        http_call(p.port(), "POST", "/openai/deployments/d/chat/completions?api-version=1", {}, "{}").body,
        "secure");
  const auto seen = b.backend.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].connection_index, 3) << "each request came on a connection of its own";
  EXPECT_FALSE(seen[0].tls_resumed);
  EXPECT_TRUE(seen[1].tls_resumed);
  EXPECT_TRUE(seen[2].tls_resumed);
}

// A backend whose port takes the connection but never answers the ClientHello (a listener that
// never accepts: the kernel completes the TCP handshake): the TLS handshake ends at
// CONNECT_TIMEOUT_SECONDS as a timeout, and the request fails over.
TEST(Tls, ABackendThatNeverAnswersTheHandshakeTimesOutAndTheRequestFailsOver) {
  asio::io_context io;
  asio::ip::tcp::acceptor silent(io, {asio::ip::address_v4::loopback(), 0});  // listens, never accepts
  MockBackend fallback([](const SeenRequest&) { return MockReply{200, {}, "fallback"}; });
  TestCa ca;
  const std::string ca_file = ca.write_cert_file();
  ProxyHarness p;
  p.cfg.upstream_ca_file = ca_file;
  p.cfg.connect_timeout = std::chrono::seconds(1);
  p.add_backend("silent", "https://localhost:" + std::to_string(silent.local_endpoint().port()), 1, 1, "k");
  p.add_backend("fallback", fallback.url(), 2);
  p.start();
  auto r = http_call(p.port(), "POST", "/openai/deployments/d/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r.body, "fallback");
  EXPECT_EQ(p.backend_cooldown(0).cause, routing::FailureCause::Timeout);
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

// The backend's reads go through the TLS layer (which may hold bytes the socket no longer
// shows), the client's through the bufferless wait: a message larger than a relay buffer crosses
// in many reads each way.
TEST(Tls, AWebSocketSessionToAnHttpsBackendRelaysBothWays) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  TlsWebSocketEcho backend(identity);
  ProxyHarness p;
  const std::string ca_file = ca.write_cert_file();
  p.cfg.upstream_ca_file = ca_file;
  p.add_backend("tls", "https://localhost:" + std::to_string(backend.port()), 1, 1, "k");
  p.start();
  WsClient client(p.port());
  ASSERT_TRUE(client.open("/openai/v1/realtime?model=gpt-4o"));
  const auto echoed = [&](const std::string& text) {
    client.send(text);
    beast::flat_buffer message;
    client.ws().read(message);
    return beast::buffers_to_string(message.data());
  };
  const std::string small = R"({"type":"input_audio_buffer.commit"})";
  EXPECT_EQ(echoed(small), small);
  const std::string large =
      R"({"type":"input_audio_buffer.append","audio":")" + std::string(100'000, 'A') + "\"}";
  EXPECT_EQ(echoed(large), large);
  EXPECT_EQ(echoed(small), small) << "and the session goes on";
  beast::error_code ec;
  client.ws().close(websocket::close_code::normal, ec);  // returns once the answering close came
  EXPECT_FALSE(ec) << ec.message();
  std::remove(ca_file.c_str());
}

}  // namespace tls_test
}  // namespace smartlb::testing
