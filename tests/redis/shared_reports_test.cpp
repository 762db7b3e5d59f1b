// Rate-limit reports shared by two replicas through a real redis-server: what one replica reads on
// an answer, and the moment its 429 names, move the other's requests too, before any answer of
// its own says so.
#include "smartlb/redis/shared_reports.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "await_condition.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"

namespace smartlb::testing {
namespace shared_reports_test {  // named, not anonymous: tests/CMakeLists.txt

const std::string kChat = "/openai/deployments/m/chat/completions?api-version=2024-10-21";

struct Replica {
  // `wall`: both replicas' wall clocks read the same (their manual clocks stand still), so a
  // report is as fresh on the other replica as where it was read, however slow the build.
  Replica(const std::string& id, const std::string& a_url, const std::string& b_url,
          const RedisServer& server, std::chrono::system_clock::time_point wall) {
    proxy.clock.set_wall_epoch(wall - base::Nanos(proxy.clock.now()));
    proxy.add_backend("a", a_url, 1);
    proxy.add_backend("b", b_url, 2);
    proxy.start();
    service = std::make_unique<redis::RedisService>(proxy.clock, test_redis_options(server.url(), id));
    reports = std::make_unique<redis::SharedReports>(*service, proxy.server->states());
    service->start();
  }
  ~Replica() {
    service->stop();  // no callback after this
    reports.reset();  // stops listening to the states, which go with the proxy
    proxy.stop();
  }
  routing::ReportedBudget::View a_budget() const {
    return proxy.server->states().reported_budget(proxy.server->snapshot()->table.member(0), "m");
  }

  ProxyHarness proxy;
  std::unique_ptr<redis::RedisService> service;
  std::unique_ptr<redis::SharedReports> reports;
};

// Two replicas in front of the same backends a and b, sharing one redis-server.
struct TwoReplicas {
  TwoReplicas(const MockBackend& a, const MockBackend& b)
      : one("replica-1", a.url(), b.url(), server, wall), two("replica-2", a.url(), b.url(), server, wall) {}
  bool up() const { return one.service->up() && two.service->up(); }
  RedisServer server;
  const std::chrono::system_clock::time_point wall = std::chrono::system_clock::now();
  Replica one, two;
};

TEST(SharedReports, AShortReportOneReplicaReadsMovesTheOthersRequests) {
  // a says 150 tokens are left; b has plenty.
  MockBackend a([](const SeenRequest&) {
    return MockReply{200,
                     {{"content-type", "application/json"},
                      {"x-ratelimit-remaining-tokens", "150"},
                      {"x-ratelimit-remaining-requests", "10"}},
                     R"({"from":"a"})"};
  });
  MockBackend b([](const SeenRequest&) { return MockReply{200, {}, R"({"from":"b"})"}; });
  TwoReplicas replicas(a, b);
  ASSERT_TRUE(await_condition([&] { return replicas.up(); }));
  Replica &one = replicas.one, &two = replicas.two;
  EXPECT_EQ(http_call(one.proxy.port(), "POST", kChat, {}, "{}").body, R"({"from":"a"})");
  ASSERT_TRUE(await_condition([&] { return two.a_budget().tokens_left == 150; }))
      << "replica 2 sent nothing to a, yet knows what a has left";
  EXPECT_EQ(one.reports->published(), 1u);
  EXPECT_EQ(two.reports->applied(), 1u);
  EXPECT_EQ(one.reports->applied(), 0u) << "a replica's own report comes back to it and is not applied twice";
  // A request too large for what a has left goes to b from replica 2's very first request.
  const std::string big = R"({"messages":[{"role":"user","content":")" + std::string(2'000, 'x') + R"("}]})";
  EXPECT_EQ(http_call(two.proxy.port(), "POST", kChat, {}, big).body, R"({"from":"b"})");
  EXPECT_EQ(a.request_count(), 1u);
}

TEST(SharedReports, A429OneReplicaGetsSaysWhenTheOtherTestsTheTarget) {
  // a has nothing left; the probe replica 1 sends it is refused, and the 429 names 50 ms.
  std::atomic<int> answers{0};
  MockBackend a([&](const SeenRequest&) {
    const int n = answers++;
    if (n == 1)
      return MockReply{429,
                       {{"content-type", "application/json"},
                        {"x-ratelimit-remaining-tokens", "0"},
                        {"x-ratelimit-remaining-requests", "10"},
                        {"retry-after-ms", "50"}},
                       R"({"error":{"code":"429"}})"};
    return MockReply{200,
                     {{"content-type", "application/json"},
                      {"x-ratelimit-remaining-tokens", n == 0 ? "0" : "5000"},
                      {"x-ratelimit-remaining-requests", "10"}},
                     R"({"from":"a"})"};
  });
  MockBackend b([](const SeenRequest&) { return MockReply{200, {}, R"({"from":"b"})"}; });
  TwoReplicas replicas(a, b);
  ASSERT_TRUE(await_condition([&] { return replicas.up(); }));
  Replica &one = replicas.one, &two = replicas.two;
  const auto advance_both = [&](base::Nanos d) {
    one.proxy.clock.advance(d);
    two.proxy.clock.advance(d);
  };
  EXPECT_EQ(http_call(one.proxy.port(), "POST", kChat, {}, "{}").body, R"({"from":"a"})");
  ASSERT_TRUE(await_condition([&] { return two.reports->applied() == 1; }));
  advance_both(routing::ReportedBudget::kFreshFor);  // a's report is no longer fresh: one request tests it
  EXPECT_EQ(http_call(one.proxy.port(), "POST", kChat, {}, "{}").body, R"({"from":"b"})")
      << "replica 1's probe was refused, and the request went on to b";
  ASSERT_TRUE(await_condition([&] {
    return two.reports->applied() == 2 && two.reports->moments_applied() == 2;
  })) << "the probe, the 429's report and its moment";
  EXPECT_EQ(one.reports->moments_published(), 2u);
  EXPECT_EQ(one.reports->moments_applied(), 0u) << "a replica's own messages are not applied again";
  // a's report is fresh again (250 ms), but the backend said 50 ms: replica 2 tests it then.
  advance_both(std::chrono::milliseconds(50));
  EXPECT_EQ(http_call(two.proxy.port(), "POST", kChat, {}, "{}").body, R"({"from":"a"})");
  EXPECT_EQ(answers.load(), 3);
}

}  // namespace shared_reports_test
}  // namespace smartlb::testing
