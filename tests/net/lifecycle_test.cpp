// Keep-alive, graceful drain on stop.
#include <gtest/gtest.h>

#include <thread>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace lifecycle_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(Lifecycle, KeepAliveCarriesSeveralRequests) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  RawConnection c(p.port());
  const std::string req = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
  c.send(req);
  c.read_until("\r\n\r\nok");
  c.send(req);
  const std::string both = c.read_until("HTTP/1.1 200 OK", 2);
  EXPECT_NE(both.find("ok"), std::string::npos);
  EXPECT_FALSE(c.peer_closed());
  EXPECT_EQ(backend.request_count(), 2u);
}

TEST(Lifecycle, DrainLetsAnInFlightStreamFinishThenStops) {
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest&) {
    MockReply r;
    r.headers = {{"content-type", "text/event-stream"}};
    r.events = {"data: 1\n\n", "data: 2\n\n"};
    r.wait_before[1] = gate;
    return r;
  });
  ProxyHarness p;
  p.add_backend("b", backend.url());
  p.start();
  const auto port = p.port();

  RawConnection idle(port);  // an idle keep-alive connection must not hold the drain up
  RawConnection c(port);
  c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  c.read_until("data: 1\n\n");

  p.server->request_stop();
  EXPECT_EQ(idle.read_until_close(), "") << "idle connections are closed at once";
  backend.open(gate);
  const std::string rest = c.read_until_close();
  EXPECT_NE(rest.find("data: 2"), std::string::npos) << "the in-flight stream completes";
  EXPECT_NE(rest.find("\r\n0\r\n\r\n"), std::string::npos) << "with a clean end";
  EXPECT_TRUE(c.peer_closed()) << "and the connection is closed after it";
  p.server->wait();  // returns: the drain ended by itself, long before the deadline
  EXPECT_EQ(p.server->open_connections(), 0u);
  EXPECT_THROW(RawConnection{port}, std::runtime_error) << "no longer accepting";
}

}  // namespace lifecycle_test
}  // namespace smartlb::testing
