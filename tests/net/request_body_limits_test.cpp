// Request bodies as the proxy takes them in, over real sockets: a large JSON request (a chat with
// images) is buffered and keeps failover; its limit holds whatever the body's framing; the bodies
// buffered at once are bounded as a whole.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace request_body_limits_test {  // named, not anonymous: tests/CMakeLists.txt

const std::string kChat = "/openai/deployments/gpt/chat/completions?api-version=2024-10-21";

// A chat completion of `bytes` bytes: a base64 image in a message, as the SDKs send one.
std::string chat_with_image(std::size_t bytes) {
  const std::string head =
      R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":")"
      R"(data:image/png;base64,)";
  const std::string tail = R"("}}]}]})";
  return head + std::string(bytes - head.size() - tail.size(), 'A') + tail;
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

MockReply ok() { return {200, {{"content-type", "application/json"}}, R"({"choices":[]})"}; }

// Uploads above 64 KiB stream; request bodies are buffered up to 1 MiB (the mock backend reads
// bodies up to 1 MiB): a 600 KB chat is "large" here as a 5-30 MiB one is by default.
struct BodyLimits : ::testing::Test {
  ProxyHarness p;
  void SetUp() override {
    p.cfg.stream_request_body_bytes = 64 * 1024;
    p.cfg.max_request_body_bytes = 1024 * 1024;
    p.cfg.max_streamed_body_bytes = 1024 * 1024;
  }
};

TEST_F(BodyLimits, AJsonRequestAboveTheUploadThresholdIsBufferedAndFailsOverLikeASmallOne) {
  MockBackend primary([](const SeenRequest&) {
    return MockReply{429, {{"retry-after", "5"}, {"content-type", "application/json"}}, "{}"};
  });
  MockBackend secondary([](const SeenRequest&) { return ok(); });
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  const std::string body = chat_with_image(600'000);
  const HttpResponse r = http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}}, body);
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.header("x-smartlb-backend"), "secondary");
  ASSERT_EQ(secondary.request_count(), 1u);
  EXPECT_EQ(secondary.last_request().body, body) << "sent again, whole";
}

TEST_F(BodyLimits, ARequestOverTheBufferedLimitIs413WhateverItsFraming) {
  p.cfg.max_request_body_bytes = 256 * 1024;  // MAX_REQUEST_BODY_BYTES below the body
  MockBackend backend([](const SeenRequest&) { return ok(); });
  p.add_backend("b", backend.url());
  p.start();
  // With a Content-Length: refused before it is read.
  {
    RawConnection c(p.port());
    c.send("POST " + kChat +
           " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 52428800\r\n"
           "Expect: 100-continue\r\n\r\n");
    const std::string got = c.read_until_close();
    EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got.substr(0, 200);
    EXPECT_NE(got.find("MAX_REQUEST_BODY_BYTES"), std::string::npos);
  }
  // Chunked: refused once it passes the limit.
  {
    RawConnection c(p.port());
    c.send("POST " + kChat +
           " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
           chunked(chat_with_image(300 * 1024), 65536));
    const std::string got = c.read_until_close();
    EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got.substr(0, 200);
  }
  // Without a Content-Type, a request all the same (not an upload that would stream).
  const HttpResponse r = http_call(p.port(), "POST", kChat, {}, chat_with_image(300 * 1024));
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(backend.request_count(), 0u);
}

// A client sends its body right after its head (as the SDKs do), so it may still be sending when
// the proxy refuses the request. The proxy reads the rest away before it closes: a close with bytes
// unread resets the connection, and the client's send fails, its answer unread.
TEST_F(BodyLimits, AClientStillSendingARefusedBodyFinishesAndReadsWhy) {
  p.cfg.max_request_body_bytes = 256 * 1024;
  MockBackend backend([](const SeenRequest&) { return ok(); });
  p.add_backend("b", backend.url());
  p.start();
  const std::string body = chat_with_image(1024 * 1024);
  RawConnection c(p.port());
  c.send("POST " + kChat + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n");
  const std::string answer = c.read_until("MAX_REQUEST_BODY_BYTES");  // refused on its length alone
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 200);
  for (std::size_t at = 0; at < body.size(); at += 64 * 1024)
    ASSERT_NO_THROW(c.send(body.substr(at, 64 * 1024))) << "reset after " << at << " bytes";
  c.send_and_close_sending("");
  c.read_until_close();
  EXPECT_TRUE(c.peer_closed());
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(BodyLimits, AnUploadOverTheBufferedLimitStreamsInsteadOfBeingRefused) {
  p.cfg.max_request_body_bytes = 32 * 1024;  // below the 64 KiB threshold: uploads stream past it
  MockBackend backend([](const SeenRequest&) { return ok(); });
  p.add_backend("b", backend.url());
  p.start();
  const HttpResponse r =
      http_call(p.port(), "POST", "/openai/files?api-version=2024-10-21",
                {{"content-type", "application/octet-stream"}}, std::string(40 * 1024, 'x'));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(backend.last_request().body.size(), 40u * 1024);
}

TEST_F(BodyLimits, BodiesBufferedAtOnceAreBoundedAsAWhole) {
  p.cfg.max_buffered_bodies_bytes = 1024 * 1024;
  MockBackend backend([](const SeenRequest&) { return ok(); });
  const GatePtr gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest& r) {
    MockReply reply = ok();
    if (r.body.size() > 700'000) reply.hold_headers = gate;  // the first large one waits
    return reply;
  });
  p.add_backend("b", backend.url());
  p.start();
  HttpResponse first;
  std::thread holder([&] {
    first =
        http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}}, chat_with_image(800'000));
  });
  ASSERT_TRUE(await_condition([&] { return backend.request_count() == 1; }));
  // 800 KB are held: another 800 KB does not fit in 1 MiB.
  const HttpResponse busy =
      http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}}, chat_with_image(600'000));
  EXPECT_EQ(busy.status, 503u) << busy.body;
  EXPECT_NE(busy.body.find("server_busy"), std::string::npos);
  EXPECT_EQ(busy.header("retry-after"), "1");
  // A small one is not counted and goes through.
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}}, "{}").status, 200u);
  backend.open(gate);
  holder.join();
  EXPECT_EQ(first.status, 200u);
  // Its share given back, the next large one fits.
  EXPECT_EQ(
      http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}}, chat_with_image(600'000))
          .status,
      200u);
}

}  // namespace request_body_limits_test
}  // namespace smartlb::testing
