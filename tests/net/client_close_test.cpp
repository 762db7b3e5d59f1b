// A client's close that arrives in the same segment as its request's last bytes raises one epoll
// event for both. The session reads the next request without trying a recv() first when nothing
// has reached the socket since the last read emptied it (io/draining_read); the close must still
// be seen then, or the connection would wait for CLIENT_IDLE_TIMEOUT_SECONDS.
#include <gtest/gtest.h>

#include <string>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace client_close_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

std::string chat_request(const std::string& marker) {
  const std::string body = R"({"messages":[]})";
  return "POST /openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21 HTTP/1.1\r\n"
         "Host: smartlb\r\nContent-Type: application/json\r\nx-marker: " +
         marker + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Sends a request with the close in its last segment: its answer comes, then smartlb's close.
void send_with_close_and_expect_answer(RawConnection& c, const std::string& marker) {
  c.send_and_close_sending(chat_request(marker));
  const std::string got = c.read_until_close();
  EXPECT_NE(got.find(R"({"for":")" + marker + R"("})"), std::string::npos) << got;
  EXPECT_TRUE(c.peer_closed()) << "smartlb did not close the connection within 30 s";
}

struct ClientCloseTest : ::testing::Test {
  MockBackend backend{[](const SeenRequest& s) {
    return MockReply{
        200, {{"content-type", "application/json"}}, R"({"for":")" + s.header("x-marker") + R"("})"};
  }};
  ProxyHarness p;
  void SetUp() override {
    p.cfg.threads = 1;
    // Far past RawConnection's 30 s bound: a session that missed the close fails the test.
    p.cfg.client_idle_timeout = 600s;
    p.add_backend("backend", backend.url(), 1);
    p.start();
  }
};

TEST_F(ClientCloseTest, AFirstRequestThatCameWithTheCloseIsAnsweredAndTheConnectionEnds) {
  RawConnection c(p.port());
  send_with_close_and_expect_answer(c, "only");
}

TEST_F(ClientCloseTest, ALaterRequestThatCameWithTheCloseIsAnsweredAndTheConnectionEnds) {
  RawConnection c(p.port());
  c.send(chat_request("first"));
  EXPECT_NE(c.read_until(R"({"for":"first"})").find("200 OK"), std::string::npos);
  // The session now waits for the next request without a recv(): the event of this segment
  // brings the request and the close at once.
  send_with_close_and_expect_answer(c, "second");
}

TEST_F(ClientCloseTest, AKeptAliveConnectionServesRequestsThatComeAfterEachAnswer) {
  RawConnection c(p.port());
  for (int i = 1; i <= 3; ++i) {
    const std::string marker = std::to_string(i);
    c.send(chat_request(marker));
    EXPECT_NE(c.read_until(R"({"for":")" + marker + R"("})").find("200 OK"), std::string::npos) << i;
  }
  EXPECT_FALSE(c.peer_closed());
  EXPECT_EQ(backend.requests().size(), 3u);
}

}  // namespace client_close_test
}  // namespace smartlb::testing
