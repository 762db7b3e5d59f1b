// Bad requests get the right 4xx and a closed connection, and nothing reaches a backend.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace request_validation_test {  // named, not anonymous: tests/CMakeLists.txt

struct RequestValidation : ::testing::Test {
  MockBackend backend{[](const SeenRequest&) { return MockReply{200, {}, "ok"}; }};
  ProxyHarness p;
  void SetUp() override {
    p.cfg.max_request_body_bytes = 1024;
    p.add_backend("b", backend.url());
    p.start();
  }
  // Sends raw bytes; returns the whole answer up to the close.
  std::string exchange(const std::string& raw) {
    RawConnection c(p.port());
    c.send(raw);
    std::string got = c.read_until_close();
    EXPECT_TRUE(c.peer_closed()) << "the proxy closes after a bad request";
    return got;
  }
};

TEST_F(RequestValidation, TransferEncodingWithContentLengthIs400) {
  auto got = exchange(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_NE(got.find("\"error\""), std::string::npos);
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(RequestValidation, UnsupportedTransferEncodingsAre400) {
  for (const char* te : {"gzip, chunked", "chunked, chunked", "xchunked"}) {
    auto got = exchange(std::string("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ") +
                        te + "\r\n\r\n0\r\n\r\n");
    EXPECT_EQ(got.rfind("HTTP/1.1 4", 0), 0u) << te << ": " << got;
  }
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(RequestValidation, DuplicateContentLengthIs400) {
  auto got = exchange(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_EQ(backend.request_count(), 0u);
}

// What one request's head said about its framing is not carried into the next one's checks.
TEST_F(RequestValidation, EachRequestOnAConnectionIsJudgedOnItsOwnHead) {
  RawConnection c(p.port());
  const std::string post = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
  c.send(post);
  c.send(post);
  const std::string got = c.read_until("ok", 2);
  EXPECT_EQ(got.find("HTTP/1.1 400"), std::string::npos) << got;
  EXPECT_EQ(backend.request_count(), 2u);
}

TEST_F(RequestValidation, MissingHostIs400) {
  auto got = exchange("GET /v1/models HTTP/1.1\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
}

TEST_F(RequestValidation, TooManyHeadersIs400) {
  std::string raw = "GET /v1/models HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) raw += "X-H" + std::to_string(i) + ": v\r\n";
  auto got = exchange(raw + "\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(RequestValidation, OversizedHeadersAre431) {
  auto got = exchange("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 431", 0), 0u) << got.substr(0, 100);
}

TEST_F(RequestValidation, BodyOverTheLimitIs413) {
  auto got = exchange("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" +
                      std::string(5000, 'a'));
  EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(RequestValidation, ChunkedBodyOverTheLimitIs413) {
  auto got = exchange(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "800\r\n" +
      std::string(2048, 'a') + "\r\n0\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(RequestValidation, GarbageIs400) {
  auto got = exchange("HELLO THERE\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_NE(got.find("Malformed HTTP request (bad target)"), std::string::npos) << got;  // says what
}

TEST_F(RequestValidation, AbsoluteFormTargetIs400) {
  auto got = exchange("GET http://evil.example/v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  EXPECT_EQ(backend.request_count(), 0u);
}

// Only the methods of the OpenAI / Azure OpenAI APIs are forwarded; methods are case-sensitive.
TEST_F(RequestValidation, MethodsOutsideTheApiAre405AndNeverForwarded) {
  for (const char* method : {"FOO", "get"}) {
    const std::string got = exchange(
        std::string(method) + " /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    EXPECT_EQ(got.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << method << ": " << got;
    EXPECT_NE(got.find("\r\nAllow: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS\r\n"), std::string::npos)
        << got;
    EXPECT_NE(got.find("\"type\":\"invalid_request_error\""), std::string::npos) << got;
    EXPECT_NE(got.find("\"code\":\"method_not_allowed\""), std::string::npos) << got;
  }
  EXPECT_EQ(backend.request_count(), 0u);
  EXPECT_EQ(http_call(p.port(), "GET", "/v1/models").status, 200u);
  EXPECT_EQ(http_call(p.port(), "POST", "/v1/chat/completions", {}, "{}").status, 200u);
  ASSERT_EQ(backend.request_count(), 2u);
  EXPECT_EQ(backend.requests()[0].method, "GET");
  EXPECT_EQ(backend.requests()[1].method, "POST");
}

TEST_F(RequestValidation, Expect100ContinueIsHonoured) {
  RawConnection c(p.port());
  c.send(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
  const std::string interim = c.read_until("100 Continue\r\n\r\n");
  ASSERT_NE(interim.find("HTTP/1.1 100 Continue"), std::string::npos);
  c.send("{}");
  const std::string all = c.read_until("ok");
  EXPECT_NE(all.find("HTTP/1.1 200 OK"), std::string::npos);
  EXPECT_FALSE(backend.last_request().has_header("expect"));
}

// A body that does not arrive within HTTP_TIMEOUT_SECONDS is answered, not dropped silently.
TEST(RequestBodyTimeout, ALateBodyIs408) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  LastRecord records;
  ProxyHarness p;
  p.cfg.http_timeout = std::chrono::seconds(1);  // socket deadlines run on the real clock
  p.add_backend("b", backend.url());
  p.start(&records);
  RawConnection c(p.port());
  c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":");
  const std::string got = c.read_until_close();  // the client's reads are bounded
  EXPECT_EQ(got.rfind("HTTP/1.1 408 Request Timeout\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << got;
  const auto head_end = got.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << "no answer: " << got;
  const std::string body = got.substr(head_end + 4);
  EXPECT_EQ(body.rfind("{\"error\":{", 0), 0u) << got;
  EXPECT_NE(body.find("\"message\":\""), std::string::npos) << got;
  EXPECT_NE(body.find("\"type\":\"invalid_request_error\""), std::string::npos) << got;
  EXPECT_NE(body.find("\"code\":\"request_timeout\""), std::string::npos) << got;
  EXPECT_TRUE(c.peer_closed()) << "the connection closes after the 408";
  EXPECT_EQ(backend.request_count(), 0u);
  const auto rec = records.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 408u);
  EXPECT_FALSE(rec->client_aborted) << "the client did not go away: it was too slow";
}

}  // namespace request_validation_test
}  // namespace smartlb::testing
