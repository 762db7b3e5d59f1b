// Large uploads (docs/stateful-apis.md, "Large uploads"): a body above STREAM_REQUEST_BODY_BYTES
// is routed on its head and streamed to one backend, over real sockets on 127.0.0.1.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace large_upload_test {  // named, not anonymous: tests/CMakeLists.txt

const std::string kUpload = "/openai/deployments/whisper/audio/transcriptions?api-version=2024-10-21";
constexpr std::size_t kBodyBytes = 600'000;  // the mock backend reads bodies up to 1 MiB

// Every byte value, in an order that repeats only every 251 bytes: a shifted or dropped byte
// shows.
std::string upload_body(std::size_t n = kBodyBytes) {
  std::string body(n, '\0');
  std::uint32_t x = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    body[i] = static_cast<char>((x >> 16) ^ (i % 251));
  }
  return body;
}

std::string chunked(const std::string& body, std::size_t chunk) {
  std::string out;
  char line[32];
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    const std::string_view part = std::string_view(body).substr(at, chunk);
    std::snprintf(line, sizeof line, "%zx\r\n", part.size());
    out.append(line).append(part).append("\r\n");
  }
  return out + "0\r\n\r\n";
}

MockReply ok(const std::string& who) {
  return {200, {{"content-type", "application/json"}}, R"({"text":"heard","by":")" + who + R"("})"};
}

// Bodies above 64 KiB are streamed; a buffered body could not be above 128 KiB, so a 600 KB
// one arriving at all was streamed; streamed bodies up to 1 MiB.
struct LargeUpload : ::testing::Test {
  LastRecord records;  // before the proxy, which reports to it until its workers stop
  ProxyHarness p;
  void SetUp() override {
    p.cfg.stream_request_body_bytes = 64 * 1024;
    p.cfg.max_request_body_bytes = 128 * 1024;
    p.cfg.max_streamed_body_bytes = 1024 * 1024;
  }
  HttpResponse upload(const std::string& body) {
    return http_call(p.port(), "POST", kUpload, {{"content-type", "application/octet-stream"}}, body);
  }
};

TEST_F(LargeUpload, ABodyWithContentLengthAboveTheThresholdArrivesWhole) {
  MockBackend backend([](const SeenRequest&) { return ok("b"); });
  p.add_backend("b", backend.url());
  p.start();
  const std::string body = upload_body();
  const HttpResponse r = upload(body);
  EXPECT_EQ(r.status, 200u) << r.body;
  ASSERT_EQ(backend.request_count(), 1u);
  const SeenRequest seen = backend.last_request();
  EXPECT_EQ(seen.header("content-length"), std::to_string(kBodyBytes));
  EXPECT_FALSE(seen.has_header("transfer-encoding"));
  EXPECT_EQ(seen.body.size(), body.size());
  EXPECT_TRUE(seen.body == body) << "the bytes differ";
}

// A chunked body grows past the threshold while it is read: what was read goes first, the
// rest follows, chunked; the connection then carries the next request.
TEST_F(LargeUpload, AChunkedBodyThatGrowsPastTheThresholdArrivesWholeAndTheConnectionGoesOn) {
  MockBackend backend([](const SeenRequest&) { return ok("b"); });
  p.add_backend("b", backend.url());
  p.start();
  const std::string body = upload_body();
  RawConnection c(p.port());
  c.send(
      "POST " + kUpload +
      " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
      chunked(body, 10'000));
  const std::string first = c.read_until("\"by\":\"b\"}");
  EXPECT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first.substr(0, 200);
  ASSERT_EQ(backend.request_count(), 1u);
  const SeenRequest seen = backend.last_request();
  EXPECT_EQ(seen.header("transfer-encoding"), "chunked");
  EXPECT_TRUE(seen.body == body) << "the bytes differ (" << seen.body.size() << " of " << body.size() << ")";
  c.send("POST " + kUpload +
         " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_NE(c.read_until("\"by\":\"b\"}", 2).find("HTTP/1.1 200", 10), std::string::npos);
  EXPECT_EQ(backend.request_count(), 2u);
}

TEST_F(LargeUpload, ABackendThatRefusesTheConnectionFailsOverBeforeTheFirstBodyByte) {
  MockBackend good([](const SeenRequest&) { return ok("good"); });
  std::uint16_t closed = 0;
  {
    MockBackend gone([](const SeenRequest&) { return MockReply{}; });
    closed = gone.port();
  }
  p.add_backend("down", "http://127.0.0.1:" + std::to_string(closed), 1);
  p.add_backend("good", good.url(), 2);
  p.start();
  const std::string body = upload_body();
  const HttpResponse r = upload(body);
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.header("x-smartlb-backend"), "good");
  ASSERT_EQ(good.request_count(), 1u);
  EXPECT_TRUE(good.last_request().body == body);
  EXPECT_FALSE(p.available(0, "whisper"));
}

// Over HTTPS to the backend, chunked from the client: the TLS stream carries the re-chunked body.
TEST_F(LargeUpload, AChunkedBodyGoesWholeToAnHttpsBackend) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  MockBackend backend([](const SeenRequest&) { return ok("tls"); }, &identity);
  const std::string ca_file = ca.write_cert_file();
  p.cfg.upstream_ca_file = ca_file;
  p.add_backend("tls", backend.url());
  p.start();
  const std::string body = upload_body();
  RawConnection c(p.port());
  c.send(
      "POST " + kUpload +
      " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
      chunked(body, 30'000));
  const std::string got = c.read_until("\"by\":\"tls\"}");
  EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got.substr(0, 200);
  ASSERT_EQ(backend.request_count(), 1u);
  EXPECT_TRUE(backend.last_request().body == body) << "the bytes differ";
  std::remove(ca_file.c_str());
}

// Once the body has gone, the backend's answer is the answer: a 429 is relayed (not failed
// over: the body cannot be sent again) and still cools the backend down.
TEST_F(LargeUpload, A429AfterTheBodyIsRelayedAsItIsAndCoolsTheBackend) {
  MockBackend primary([](const SeenRequest&) {
    return MockReply{429,
                     {{"retry-after", "5"}, {"content-type", "application/json"}},
                     R"({"error":{"code":"429","message":"slow down"}})"};
  });
  MockBackend secondary([](const SeenRequest&) { return ok("secondary"); });
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  const HttpResponse r = upload(upload_body());
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(r.body, R"({"error":{"code":"429","message":"slow down"}})");
  EXPECT_EQ(r.header("x-smartlb-backend"), "primary");
  EXPECT_EQ(primary.request_count(), 1u);
  EXPECT_EQ(secondary.request_count(), 0u);
  EXPECT_FALSE(p.available(0, "whisper")) << "the 429 cools the backend down";
  // The next upload goes to the other backend.
  EXPECT_EQ(upload(upload_body()).header("x-smartlb-backend"), "secondary");
}

// Refused on its head: the client waiting for 100 Continue is told at once, sends nothing.
TEST_F(LargeUpload, AContentLengthOverTheStreamedLimitIs413BeforeAnythingIsSent) {
  MockBackend backend([](const SeenRequest&) { return ok("b"); });
  p.add_backend("b", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send("POST " + kUpload +
         " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: "
         "2000000\r\nExpect: 100-continue\r\n\r\n");
  const std::string got = c.read_until_close();
  EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
  EXPECT_NE(got.find("\"error\""), std::string::npos) << got;
  EXPECT_NE(got.find("MAX_STREAMED_BODY_BYTES"), std::string::npos) << got;
  EXPECT_EQ(backend.request_count(), 0u);
}

// A chunked body says its size only as it goes: past the limit, both sides are closed (the
// backend's request is cut short, so it never sees a whole one), the client told 413.
TEST_F(LargeUpload, AChunkedBodyPastTheStreamedLimitIs413AndTheBackendNeverGetsAWholeRequest) {
  p.cfg.max_streamed_body_bytes = 256 * 1024;
  MockBackend backend([](const SeenRequest&) { return ok("b"); });
  p.add_backend("b", backend.url());
  p.start(&records);
  RawConnection c(p.port());
  // Four chunks of 64 KiB fill the limit; the fifth's size line passes it (nothing is sent
  // after it, so the proxy has read everything the client sent when it answers).
  const std::string body = upload_body(4 * 65536);
  std::string raw = chunked(body, 65536);
  raw.resize(raw.size() - 5);  // less the last chunk
  c.send(
      "POST " + kUpload +
      " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
      raw + "10000\r\n");
  const std::string got = c.read_until_close();
  EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got.substr(0, 300);
  EXPECT_NE(got.find("MAX_STREAMED_BODY_BYTES"), std::string::npos) << got;
  const auto rec = records.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 413u);
  EXPECT_EQ(backend.request_count(), 0u);
  EXPECT_TRUE(p.available(0, "whisper")) << "not the backend's failure";
}

// A client that stops sending mid-body: the backend's connection is closed (never pooled with
// half a request on it), and the backend is not blamed.
TEST_F(LargeUpload, AClientThatLeavesMidBodyClosesTheBackendConnectionAndBlamesNoOne) {
  MockBackend backend([](const SeenRequest&) { return ok("b"); });
  p.add_backend("b", backend.url());
  p.start(&records);
  {
    RawConnection c(p.port());
    c.send("POST " + kUpload +
           " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
           std::to_string(kBodyBytes) + "\r\n\r\n" + upload_body(200'000));
    c.close();
  }
  const auto rec = records.await();
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->client_aborted);
  ASSERT_EQ(rec->attempt_count, 1u);
  EXPECT_EQ(rec->attempts[0].cause, routing::FailureCause::None);
  EXPECT_TRUE(p.available(0, "whisper"));
  // The next request needs a new upstream connection: the cut one was not pooled.
  EXPECT_EQ(http_call(p.port(), "POST", kUpload, {}, "{}").status, 200u);
  ASSERT_EQ(backend.request_count(), 1u) << "only the whole request reached the backend";
  EXPECT_EQ(backend.last_request().connection_index, 2);
}

// A backend that answers on the head alone and closes without reading the body (an auth or size
// refusal): one connection, its answer written at once, the rest of the upload left unread (so
// the close resets the connection).
class AnswersOnTheHead {
 public:
  explicit AnswersOnTheHead(std::string answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("listen failed");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~AnswersOnTheHead() {
    ::shutdown(fd_, SHUT_RDWR);  // ends a pending accept
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      head.append(buf, static_cast<std::size_t>(n));
    }
    (void)::send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL);
    ::close(c);
  }

  std::string answer_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// The backend refuses the upload on its head and closes mid-body: its answer reaches the client
// (not a 502), and the client's connection ends, the rest of its body unread.
TEST_F(LargeUpload, AnAnswerTheBackendSentBeforeTheBodyWasWholeIsRelayed) {
  p.cfg.max_streamed_body_bytes = 64 * 1024 * 1024;
  const std::string refusal =
      R"({"error":{"code":"401","message":"Access denied due to invalid subscription key."}})";
  AnswersOnTheHead backend("HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(refusal.size()) + "\r\nConnection: close\r\n\r\n" + refusal);
  p.add_backend("b", backend.url());
  p.start(&records);
  RawConnection c(p.port());
  // Far more than the sockets between here and the backend hold: writes go on after its close.
  const std::size_t total = 32 * 1024 * 1024;
  c.send("POST " + kUpload +
         " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
         std::to_string(total) + "\r\n\r\n");
  std::thread uploader([&c, total] {
    const std::string piece = upload_body(1024 * 1024);
    try {
      for (std::size_t sent = 0; sent < total; sent += piece.size()) c.send(piece);
    } catch (const std::runtime_error&) {
      // smartlb closed the connection after the answer: the rest is not wanted
    }
  });
  const std::string got = c.read_until_close();
  uploader.join();
  EXPECT_EQ(got.rfind("HTTP/1.1 401", 0), 0u) << got.substr(0, 300);
  EXPECT_NE(got.find(refusal), std::string::npos) << got.substr(0, 300);
  EXPECT_NE(got.find("Connection: close"), std::string::npos) << got.substr(0, 300);
  EXPECT_TRUE(c.peer_closed());
  const auto rec = records.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 401u);
}

}  // namespace large_upload_test
}  // namespace smartlb::testing
