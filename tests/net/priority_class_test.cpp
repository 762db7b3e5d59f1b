// Priority classes over sockets: a lower class's request leaves what the classes above ask for
// (smartlb's own 429, the exact Retry-After, no backend called), the class comes from the
// caller or a header that may only lower it, and the header never goes upstream.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "await_condition.hpp"
#include "chat_request.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace priority_class_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const Headers kBatch = {{"x-smartlb-priority", "batch"}};

struct PriorityClassesOverSockets : ::testing::Test {
  MockBackend backend{[](const SeenRequest& r) {
    return MockReply{r.has_header("x-smartlb-priority") ? 500u : 200u, {}, "ok"};
  }};
  ProxyHarness proxy;
  LastRecord records;
  std::size_t finished = 0;

  // `batch_share`: the most the batch class leaves, per mille (0: the default classes).
  void start(std::int64_t rpm, std::uint16_t batch_share = 0) {
    if (batch_share > 0)
      proxy.cfg.policy.priority_classes = {{"interactive", 0, {}, {}}, {"batch", batch_share, {}, {}}};
    proxy.cfg.quota_window = 60s;
    proxy.add_backend("only", backend.url()).rpm = rpm;
    proxy.start(&records);
  }
  HttpResponse call(const Headers& headers = {}) {
    HttpResponse r = http_call(proxy.port(), "POST", kChat, headers, kBody);
    EXPECT_TRUE(records.await(++finished));
    return r;
  }
};

// The manual clock stands still: the interactive demand (3 requests a second) over the time
// until the minute window gives anything back is more than the batch class's share, 2 of 10.
TEST_F(PriorityClassesOverSockets, ABatchRequestLeavesWhatInteractiveRequestsAskFor) {
  start(10, 200);  // 10 requests a minute; batch leaves at most 20 %
  ASSERT_EQ(call(kBatch).status, 200u);
  EXPECT_EQ(records.await(finished)->priority_class, "batch");
  for (int i = 0; i < 6; ++i) ASSERT_EQ(call().status, 200u) << i;
  EXPECT_EQ(records.await(finished)->priority_class, "") << "the first class is not named";
  EXPECT_EQ(call(kBatch).status, 200u) << "7 used + 1 + a reserve of 2 fit in 10";
  const HttpResponse refused = call(kBatch);
  EXPECT_EQ(refused.status, 429u) << "8 used + 1 + a reserve of 2 > 10";
  EXPECT_FALSE(refused.header("retry-after-ms").empty());
  EXPECT_EQ(backend.request_count(), 8u) << "smartlb's own 429: no backend called";
  EXPECT_EQ(call().status, 200u) << "interactive requests take the reserve";
  EXPECT_EQ(call().status, 200u);
  EXPECT_EQ(call().status, 429u) << "the quota itself is spent";
  EXPECT_EQ(backend.request_count(), 10u);
}

TEST_F(PriorityClassesOverSockets, TheRetryAfterIsWhenTheBatchRequestAndTheReserveFit) {
  start(10, 200);
  ASSERT_EQ(call(kBatch).status, 200u);
  for (int i = 0; i < 6; ++i) ASSERT_EQ(call().status, 200u) << i;
  ASSERT_EQ(call(kBatch).status, 200u);
  const HttpResponse refused = call(kBatch);
  ASSERT_EQ(refused.status, 429u);
  proxy.clock.advance(std::chrono::milliseconds(std::stoll(refused.header("retry-after-ms"))));
  EXPECT_EQ(call(kBatch).status, 200u) << "admitted when promised";
}

TEST_F(PriorityClassesOverSockets, AnUnknownClassIs400AndNoBackendIsCalled) {
  start(0);
  const HttpResponse r = call({{"x-smartlb-priority", "urgent"}});
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.body.find("names no priority class: 'urgent' (the classes are interactive, batch)"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST_F(PriorityClassesOverSockets, AClientEntryPutsItsRequestsInItsClassAndTheyCannotRaiseIt) {
  for (const char* name : {"nightly", "app"}) {
    config::ClientConfig c;
    c.name = name;
    c.key = std::string(name) + "-key-1";
    proxy.cfg.policy.clients.push_back(c);
  }
  proxy.cfg.policy.priority_classes = {{"interactive", 0, {}, {}}, {"batch", 500, {}, {"nightly"}}};
  start(4);
  ASSERT_EQ(call({{"api-key", "nightly-key-1"}}).status, 200u);
  EXPECT_EQ(records.await(finished)->priority_class, "batch");
  for (int i = 0; i < 2; ++i) ASSERT_EQ(call({{"api-key", "app-key-1"}}).status, 200u) << i;
  EXPECT_EQ(call({{"api-key", "nightly-key-1"}, {"x-smartlb-priority", "interactive"}}).status, 429u)
      << "a request cannot raise its caller's class: 3 used + 1 + a reserve of 1 > 4";
  EXPECT_EQ(call({{"api-key", "app-key-1"}}).status, 200u);
  EXPECT_EQ(backend.request_count(), 4u);
}

}  // namespace priority_class_test
}  // namespace smartlb::testing

namespace smartlb::testing {
namespace priority_class_test {

// A class's bounded wait for capacity (max_queue_seconds) over sockets: the request waits on a
// timer while the client's connection is watched. The manual clock stands still until the test
// moves it: the waiting request looks again every time its wait ends, and is served once the
// test lets the cooldown pass.
struct WaitForCapacityOverSockets : ::testing::Test {
  std::atomic<int> answered{0};
  MockBackend backend{[this](const SeenRequest&) {
    return ++answered == 1 ? MockReply{429u, {{"retry-after-ms", retry_after_ms}}, "{}"}
                           : MockReply{200u, {}, "ok"};
  }};
  std::string retry_after_ms;
  ProxyHarness proxy;
  LastRecord records;

  void start(const std::string& retry_ms, std::chrono::milliseconds max_queue) {
    retry_after_ms = retry_ms;
    config::PriorityClassConfig interactive{"interactive", 0, {}, {}};
    interactive.max_queue = max_queue;
    proxy.cfg.policy.priority_classes = {interactive, {"batch", 500, {}, {}}};
    proxy.add_backend("only", backend.url());
    proxy.start(&records);
  }
};

TEST_F(WaitForCapacityOverSockets, ARequestWaitsOutTheCooldownInsteadOfA429) {
  start("300", 10s);
  std::thread mover([&] {
    // Once the 429 cooled the backend down, the cooldown passes.
    if (await_condition([&] { return !proxy.available(0, "gpt-4o"); })) proxy.clock.advance(300ms);
  });
  const HttpResponse r = http_call(proxy.port(), "POST", kChat, {}, kBody);
  mover.join();
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(backend.request_count(), 2u);
  const auto rec = records.await(1);
  ASSERT_TRUE(rec);
  // How long is the fake clock's business (the clock may move before the request first looks, and
  // the wait is then its least); forward_job_test shows the exact waits.
  EXPECT_NE(rec->queued_ms, -1) << "it waited";
  EXPECT_EQ(rec->queue_class, "interactive");
}

TEST_F(WaitForCapacityOverSockets, AClientThatLeavesWhileItsRequestWaitsEndsTheWait) {
  start("100000", 300s);  // a wait of 100 s: the test ends long before unless the client's leaving ends it
  RawConnection client(proxy.port());
  client.send("POST " + kChat + " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(kBody.size()) + "\r\n\r\n" + kBody);
  ASSERT_TRUE(backend.wait_for_requests(1));
  client.close();
  const auto rec = records.await(1);
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->client_aborted);
  EXPECT_EQ(rec->status, 0u) << "nobody was left to answer";
  EXPECT_NE(rec->queued_ms, -1) << "it was waiting";
  EXPECT_EQ(backend.request_count(), 1u);
}

TEST_F(WaitForCapacityOverSockets, ADrainAnswersAWaitingRequestWithItsRefusal) {
  start("100000", 300s);  // a wait of 100 s: only the drain ends it in time
  RawConnection client(proxy.port());
  client.send("POST " + kChat + " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(kBody.size()) + "\r\n\r\n" + kBody);
  ASSERT_TRUE(backend.wait_for_requests(1));
  ASSERT_TRUE(await_condition([&] { return !proxy.available(0, "gpt-4o"); }));
  proxy.server->request_stop();
  const std::string answer = client.read_until("\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 429", 0), 0u) << answer.substr(0, 200);
  proxy.server->wait();
}

}  // namespace priority_class_test
}  // namespace smartlb::testing
