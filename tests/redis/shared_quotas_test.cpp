// Replicas sharing a declared quota through a real redis-server: two in-process proxies (each
// a Server with its own RedisService and SharedQuotas, on manual clocks showing the same wall
// time) in front of one mock backend that declares its TPM. What reaches the backend in a
// window is counted there.
#include "smartlb/redis/shared_quotas.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "await_condition.hpp"
#include "chat_request.hpp"
#include "continuous_traffic.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/redis/keys.hpp"

namespace smartlb::testing {
namespace shared_quotas_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using redis::RedisService;
using redis::SharedQuotas;

// Just after a minute of today begins, the same on every replica's wall clock: early in a
// sub-window (1.2 s), also 72 s on, so that no lease is asked ahead for the next sub-window
// while the manual clocks stand still (it would hold tokens no request here can take).
std::chrono::system_clock::time_point test_start() {
  return std::chrono::floor<std::chrono::minutes>(std::chrono::system_clock::now()) + 100ms;
}

struct Replica {
  Replica(const std::string& id, const std::string& backend_url, std::int64_t tpm,
          std::chrono::system_clock::time_point start, config::ClientLimits client_limits = {})
      : id(id) {
    proxy.clock.set_wall_epoch(start - base::Nanos(proxy.clock.now()));
    proxy.cfg.quota_window = 60s;
    proxy.add_backend("only", backend_url).tpm = tpm;
    if (!(client_limits == config::ClientLimits{})) {  // a client with a budget (its key required then)
      config::ClientConfig c;
      c.name = "search";
      c.key = "search-key-1";
      c.limits = client_limits;
      proxy.cfg.policy.clients.push_back(c);
    }
    proxy.start();
  }
  ~Replica() {
    if (service) service->stop();  // nothing runs on the Redis thread any more (the leases go next)
    proxy.stop();
    quotas.reset();
  }

  void connect(const RedisServer& server) {
    service = std::make_unique<RedisService>(proxy.clock, test_redis_options(server.url(), id));
    redis::SharedQuotasOptions qo;
    qo.tick = 20ms;
    qo.on_answer = [this](std::int64_t asked, std::int64_t granted) {
      ++(granted < asked ? short_answers : full_answers);
    };
    quotas = std::make_unique<SharedQuotas>(*service, proxy.clock, qo);
    proxy.server->states().set_lease_broker(quotas.get());
    proxy.server->budgets().set_lease_broker(quotas.get());
    service->start();
  }

  unsigned post() {
    return http_call(proxy.port(), "POST", kChat, {{"api-key", "search-key-1"}}, kBody).status;
  }
  void advance(base::Nanos d) { proxy.clock.advance(d); }
  // This replica's lease of the backend's token quota, once no ask of it is in flight.
  routing::LeasedQuota::View settled_lease() {
    routing::LeasedQuota::View v;
    EXPECT_TRUE(await_condition([&] {
      const auto snapshot = proxy.server->snapshot();
      v = proxy.server->states().leases(snapshot->table.member(0), "gpt-4o").tokens.value_or(v);
      return v.shared && !v.in_flight;
    }));
    return v;
  }

  std::string id;
  ProxyHarness proxy;
  std::unique_ptr<RedisService> service;
  std::unique_ptr<SharedQuotas> quotas;
  std::atomic<int> full_answers{0}, short_answers{0};  // told on the Redis thread (metrics' hook)
};

struct SharedQuotasTest : ::testing::Test {
  MockBackend backend{[](const SeenRequest&) { return MockReply{200, {}, "ok"}; }};
  RedisServer server;
  const std::chrono::system_clock::time_point start = test_start();

  // What the quota's hash counts in all its sub-windows (a client of its own for reading keys).
  std::optional<std::int64_t> counted(const Replica& r, const std::string& quota) {
    std::optional<std::int64_t> out;
    std::atomic<bool> done{false};
    r.service->command({"HVALS", redis::quota_key("smartlb:", quota)}, [&](redis::RedisResult v) {
      if (v.ok()) {
        out = 0;
        for (const auto& e : v.value->elements) *out += e.as_integer().value_or(0);
      }
      done = true;
    });
    EXPECT_TRUE(await_condition([&] { return done.load(); }));
    return out;
  }
};

// 3:1 spread of 160 requests of 200 tokens against a TPM of 2000: ten a minute, all replicas
// together.
TEST_F(SharedQuotasTest, TwoReplicasTogetherNeverSendMoreThanTheDeclaredTpmInAWindow) {
  Replica a("replica-a", backend.url(), 2000, start), b("replica-b", backend.url(), 2000, start);
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(a.service->up() && b.service->up());
  std::size_t before = 0;
  for (int window = 0; window < 2; ++window) {
    int served_a = 0, served_b = 0;
    for (int i = 0; i < 40; ++i) {
      for (int k = 0; k < 3; ++k) served_a += a.post() == 200;
      served_b += b.post() == 200;
    }
    const std::size_t sent = backend.request_count() - before;
    EXPECT_LE(sent, 10u) << "window " << window << ": the declared 2000 tokens, whichever replica sent";
    EXPECT_GE(sent, 9u) << "window " << window
                        << ": what the replicas hold unused is less than a request each";
    EXPECT_EQ(static_cast<std::size_t>(served_a + served_b), sent);
    EXPECT_GT(served_b, 0) << "the quieter replica gets its turn too";
    before = backend.request_count();
    a.advance(72s);  // past the window, as early in a sub-window: both replicas see the same wall clock
    b.advance(72s);
  }
  EXPECT_EQ(a.quotas->failed() + b.quotas->failed(), 0u);
  EXPECT_GT(a.full_answers + b.full_answers, 0);
  EXPECT_GT(a.short_answers + b.short_answers, 0) << "the quota ran out: asks got less than they asked for";
}

// What a lower priority class checks its reserve against (LeasedQuota::left_everywhere) starts
// from Redis's count of what every replica holds: each answer brings it.
TEST_F(SharedQuotasTest, EachAnswerTellsAReplicaWhatEveryReplicaHoldsOfTheWindow) {
  Replica a("replica-a", backend.url(), 20'000, start), b("replica-b", backend.url(), 20'000, start);
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(a.service->up() && b.service->up());
  ASSERT_EQ(a.post(), 200);
  const routing::LeasedQuota::View held_by_a = a.settled_lease();
  EXPECT_GT(held_by_a.leased, 0);
  EXPECT_GE(held_by_a.counted, held_by_a.leased + held_by_a.next_leased);
  EXPECT_LE(held_by_a.counted, held_by_a.leased + held_by_a.next_leased + held_by_a.taken)
      << "only a holds or took any (what it took before its first lease, reported with its ask)";
  ASSERT_EQ(b.post(), 200);
  const routing::LeasedQuota::View held_by_b = b.settled_lease();
  EXPECT_GT(held_by_b.leased, 0);
  EXPECT_GE(held_by_b.counted, held_by_a.leased + held_by_b.leased) << "b's count holds a's lease too";
  // ... and the earliest sub-window it counts any of them in, whose end gives room back.
  EXPECT_EQ(held_by_a.oldest_counted, held_by_a.subwindow);
  EXPECT_EQ(held_by_b.oldest_counted, held_by_a.subwindow) << "a's lease, from before b's";
}

TEST_F(SharedQuotasTest, AReloadThatRaisesASharedLimit_AppliesAtOnceAndKeepsWhatWasUsed) {
  Replica a("replica-a", backend.url(), 1000, start);  // five requests a minute
  a.connect(server);
  ASSERT_TRUE(a.service->up());
  // Leases are asked of Redis as requests need them, never waited for: on a busy machine a
  // request may find the next lease still on its way and be refused. Post until five are
  // served; after them, the quota refuses.
  int served = 0;
  EXPECT_TRUE(await_condition([&] {
    served += a.post() == 200;
    return served >= 5;
  }));
  for (int i = 0; i < 3; ++i) served += a.post() == 200;
  EXPECT_EQ(served, 5) << "the declared five requests a minute";
  config::Config next = a.proxy.cfg;
  next.backends[0].tpm = 1600;  // eight
  a.proxy.server->reload(next);
  // The larger lease is asked of Redis as requests need it (never waited for on the request
  // path): the first ones after the reload may be refused until it is granted.
  EXPECT_TRUE(await_condition([&] {
    served += a.post() == 200;
    return served >= 8;
  }));
  for (int i = 0; i < 4; ++i) served += a.post() == 200;
  EXPECT_EQ(served, 8) << "the new limit, and the five used still count";
  EXPECT_EQ(backend.request_count(), 8u);
}

TEST_F(SharedQuotasTest, AClientBudgetsMinuteLimitIsSharedByTwoReplicas) {
  const config::ClientLimits limits{.tokens_per_minute = 2000};
  Replica a("replica-a", backend.url(), 0, start, limits), b("replica-b", backend.url(), 0, start, limits);
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(a.service->up() && b.service->up());
  int served_b = 0;
  for (int i = 0; i < 40; ++i) {
    for (int k = 0; k < 3; ++k) a.post();
    served_b += b.post() == 200;
  }
  EXPECT_LE(backend.request_count(), 10u) << "the client's 2000 tokens a minute, whichever replica it calls";
  EXPECT_GE(backend.request_count(), 9u);
  EXPECT_GT(served_b, 0);
  EXPECT_GE(counted(a, "budget:client\x1fsearch:tokens").value_or(0), 1800);
}

TEST_F(SharedQuotasTest, TheScriptNeverGrantsPastTheLimitInTheLastWindowsSubWindowsAndCountsReports) {
  Replica a("replica-a", backend.url(), 2000, start);
  a.connect(server);
  const std::string key = redis::quota_key("smartlb:", "x/y:tokens");
  // used, want, sub-window, first counted (ten sub-windows a window), an ended sub-window and
  // what was left unused of it -> the grant; `counted`: what the window holds once granted;
  // `oldest`: the earliest sub-window counted with the asked one that holds any (-1: none).
  std::int64_t counted = -1, oldest = -2;
  const auto ask = [&](std::int64_t used, std::int64_t want, std::int64_t window,
                       std::int64_t returned_subwindow = 0, std::int64_t returned = 0) {
    std::atomic<bool> done{false};
    std::int64_t grant = -1;
    counted = -1;
    oldest = -2;
    a.service->eval(
        SharedQuotas::script(), {key},
        {std::to_string(used), std::to_string(want), "2000", std::to_string(window),
         std::to_string(window - 10), "120000", std::to_string(returned_subwindow), std::to_string(returned)},
        [&](redis::RedisResult r) {
          if (r.ok() && r.value->elements.size() == 3) {
            grant = r.value->elements[0].as_integer().value_or(-1);
            counted = r.value->elements[1].as_integer().value_or(-1);
            oldest = r.value->elements[2].as_integer().value_or(-2);
          }
          done = true;
        });
    EXPECT_TRUE(await_condition([&] { return done.load(); }));
    return grant;
  };
  const auto command = [&](std::vector<std::string> c) {
    std::atomic<bool> done{false};
    std::int64_t value = -1;
    a.service->command(std::move(c), [&](redis::RedisResult r) {
      value = r.ok() ? r.value->as_integer().value_or(-1) : -1;
      done = true;
    });
    EXPECT_TRUE(await_condition([&] { return done.load(); }));
    return value;
  };
  EXPECT_EQ(ask(300, 500, 17), 500) << "300 reported + 500 granted";
  EXPECT_EQ(counted, 800) << "what the window holds, for a lower class's reserve";
  EXPECT_EQ(oldest, 17) << "and when it gives room back";
  EXPECT_EQ(ask(0, 1500, 17), 1200) << "what is left";
  EXPECT_EQ(counted, 2000);
  EXPECT_EQ(ask(0, 10, 17), 0);
  EXPECT_EQ(ask(50, 10, 17), 0);
  EXPECT_EQ(command({"HGET", key, "17"}), 2050) << "a late report is counted even past the limit";
  EXPECT_GT(command({"PTTL", key}), 100'000) << "the time to live asked";
  EXPECT_EQ(ask(0, 10, 27), 0) << "sub-window 17 still counts ten sub-windows on";
  EXPECT_EQ(oldest, 17);
  EXPECT_EQ(ask(0, 10, 28), 10) << "and no longer eleven on";
  EXPECT_EQ(oldest, 28) << "its grant is the oldest that counts now";
  EXPECT_EQ(ask(0, 10, 16), 0) << "an earlier sub-window counts those after it (granted ahead) too";
  EXPECT_EQ(oldest, 17);
  EXPECT_EQ(ask(0, 1, 40), 1);
  EXPECT_EQ(command({"HEXISTS", key, "17"}), 0) << "forgotten: a window older than any still counted";
  EXPECT_EQ(command({"HEXISTS", key, "28"}), 1);
  EXPECT_EQ(ask(0, 0, 41, 40, 1), 0);
  EXPECT_EQ(oldest, -1) << "nothing counts any more";
  EXPECT_EQ(command({"HGET", key, "40"}), 0) << "what a replica left unused comes off its sub-window";
  EXPECT_EQ(ask(0, 0, 41, 28, 100), 0);
  EXPECT_EQ(command({"HGET", key, "28"}), 0) << "never below nothing";
  EXPECT_EQ(ask(0, 5000, 41), 2000) << "given back: granted again";
}

TEST_F(SharedQuotasTest, RedisLostEachReplicaKeepsToItsShareAndBackItReportsWhatItTook) {
  Replica a("replica-a", backend.url(), 2000, start), b("replica-b", backend.url(), 2000, start);
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(
      await_condition([&] { return a.service->live_replicas() == 2 && b.service->live_replicas() == 2; }));
  EXPECT_EQ(a.post(), 200u);  // the quota exists on both sides before Redis goes
  EXPECT_EQ(b.post(), 200u);
  server.kill();
  ASSERT_TRUE(await_condition([&] { return !a.service->up() && !b.service->up(); }));
  a.advance(72s);  // nothing of the last window counts any more, counted locally
  b.advance(72s);
  const std::size_t before = backend.request_count();
  int served_a = 0, served_b = 0;
  for (int i = 0; i < 10; ++i) served_a += a.post() == 200;
  for (int i = 0; i < 2; ++i) served_b += b.post() == 200;
  EXPECT_EQ(served_a, 5) << "2000 / 2 replicas: its share";
  EXPECT_EQ(served_b, 2);
  EXPECT_EQ(backend.request_count() - before, 7u);

  server.start();  // empty: nothing was saved
  const auto answered_a = a.quotas->answered(), answered_b = b.quotas->answered();
  ASSERT_TRUE(await_condition([&] {
    return a.service->up() && b.service->up() && a.quotas->answered() > answered_a &&
           b.quotas->answered() > answered_b;
  }));
  EXPECT_GE(counted(a, "only/gpt-4o:tokens").value_or(0), 1400) << "both reported what they took meanwhile";
  for (int i = 0; i < 20; ++i) {
    served_a += a.post() == 200;
    served_b += b.post() == 200;
  }
  EXPECT_LE(backend.request_count() - before, 10u) << "shared again: the window's 2000 tokens in all";
  EXPECT_GE(backend.request_count() - before, 9u);
}

TEST_F(SharedQuotasTest, NoRequestFailsBecauseRedisIsLostOrComesBack) {
  Replica a("replica-a", backend.url(), 1'000'000'000, start),
      b("replica-b", backend.url(), 1'000'000'000, start);
  a.connect(server);
  b.connect(server);
  ContinuousTraffic traffic_a(a.proxy.port(), kChat), traffic_b(b.proxy.port(), kChat);
  ASSERT_TRUE(traffic_a.await_sent(20) && traffic_b.await_sent(20));
  server.kill();
  ASSERT_TRUE(await_condition([&] { return !a.service->up() && !b.service->up(); }));
  ASSERT_TRUE(traffic_a.await_sent(traffic_a.sent() + 20) && traffic_b.await_sent(traffic_b.sent() + 20));
  server.start();
  ASSERT_TRUE(await_condition([&] { return a.service->up() && b.service->up(); }));
  ASSERT_TRUE(traffic_a.await_sent(traffic_a.sent() + 20) && traffic_b.await_sent(traffic_b.sent() + 20));
  traffic_a.stop();
  traffic_b.stop();
  EXPECT_EQ(traffic_a.failed(), 0) << "of " << traffic_a.sent();
  EXPECT_EQ(traffic_b.failed(), 0) << "of " << traffic_b.sent();
  EXPECT_GT(a.quotas->answered(), 0u);
}

}  // namespace shared_quotas_test
}  // namespace smartlb::testing
