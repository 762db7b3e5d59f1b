// A WebSocket session ends cleanly whatever the backend does: a client that leaves ends the
// backend's connection too, even when the backend ignores a half-close; bad framing gets a close
// 1002 before the sockets close; a 101 nobody asked for never reaches a client.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "smartlb/websocket/handshake.hpp"

namespace smartlb::testing {
namespace websocket_end_test {  // named, not anonymous: tests/CMakeLists.txt

// A plain-HTTP WebSocket backend that accepts one handshake, then stays silent and never closes
// its side (it ignores a half-close), until the test ends: what a careless backend does.
class SilentWebSocketBackend {
 public:
  SilentWebSocketBackend() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listener_, 4);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~SilentWebSocketBackend() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
    if (conn_ >= 0) ::close(conn_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::atomic<bool> upgraded{false};
  std::atomic<bool> saw_bytes_after{false};  // anything after the handshake (a close frame)
  std::atomic<bool> peer_done{false};        // its read found the end (FIN or reset)

 private:
  void serve() {
    conn_ = ::accept(listener_, nullptr, nullptr);
    if (conn_ < 0) return;
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(conn_, buf, sizeof buf, 0);
      if (n <= 0) return;
      head.append(buf, static_cast<std::size_t>(n));
    }
    std::string key;
    for (const std::string name : {"Sec-WebSocket-Key: ", "sec-websocket-key: "})
      if (const auto at = head.find(name); at != std::string::npos)
        key = head.substr(at + name.size(), head.find("\r\n", at) - at - name.size());
    const std::string answer =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: " +
        websocket::accept_for(key) + "\r\n\r\n";
    ::send(conn_, answer.data(), answer.size(), MSG_NOSIGNAL);
    upgraded = true;
    for (;;) {  // reads, never writes, never closes
      const ssize_t n = ::recv(conn_, buf, sizeof buf, 0);
      if (n <= 0) break;
      saw_bytes_after = true;
    }
    peer_done = true;
    while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  int listener_ = -1, conn_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string handshake() {
  return "GET /openai/v1/realtime?model=gpt-4o HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
         "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
         "dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
}

struct WebSocketEnd : ::testing::Test {
  ProxyHarness p;
  SilentWebSocketBackend backend;
  void SetUp() override {
    p.add_backend("silent", backend.url());
    p.start();
  }
};

TEST_F(WebSocketEnd, AClientThatLeavesEndsTheSessionEvenWhenTheBackendIgnoresTheHalfClose) {
  RawConnection c(p.port());
  c.send(handshake());
  ASSERT_NE(c.read_until("\r\n\r\n").find("101"), std::string::npos);
  ASSERT_TRUE(await_condition([&] { return p.server->open_connections() == 1; }));
  c.close();  // FIN, no close frame
  ASSERT_TRUE(backend.peer_done.load() || await_condition([&] { return backend.peer_done.load(); }));
  // REALTIME_IDLE_TIMEOUT_SECONDS is 300 s: only the session's own end frees the connection sooner.
  EXPECT_TRUE(await_condition([&] { return p.server->open_connections() == 0; }))
      << "the session still holds both connections";
}

TEST_F(WebSocketEnd, AnUnmaskedClientFrameGetsACloseWithProtocolErrorBothWays) {
  RawConnection c(p.port());
  c.send(handshake());
  ASSERT_NE(c.read_until("\r\n\r\n").find("101"), std::string::npos);
  // A text frame "hi" the client did not mask: a protocol error (RFC 6455 5.1).
  c.send(std::string("\x81\x02hi", 4));
  const std::string got = c.read_until_close();
  const std::string close_1002("\x88\x02\x03\xea", 4);  // close, 2 bytes: 1002
  EXPECT_NE(got.find(close_1002), std::string::npos) << "the client is told 1002 before its socket closes";
  EXPECT_TRUE(await_condition([&] { return backend.saw_bytes_after.load(); })) << "the backend is told too";
  EXPECT_TRUE(await_condition([&] { return p.server->open_connections() == 0; }));
}

TEST(WebSocketUpgrade, A101ToARequestThatAskedForNoUpgradeGetsTheClientA502) {
  MockBackend backend([](const SeenRequest&) {
    MockReply r;
    r.raw = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    return r;
  });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  const HttpResponse r =
      http_call(p.port(), "POST", "/openai/deployments/gpt/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r.status, 502u) << r.body;
  EXPECT_FALSE(p.available(0, "gpt")) << "a broken backend cools down";
}

}  // namespace websocket_end_test
}  // namespace smartlb::testing
