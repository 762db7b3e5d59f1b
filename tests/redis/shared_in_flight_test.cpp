// A client budget's max_in_flight held by replicas together through a real redis-server: two
// in-process proxies (each a Server with its own RedisService and SharedInFlight) in front of one
// mock backend, and the lease script called as a replica calls it.
#include "smartlb/redis/shared_in_flight.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "await_condition.hpp"
#include "chat_request.hpp"
#include "held_stream.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/clients/client_budget.hpp"
#include "smartlb/http/error_body.hpp"
#include "smartlb/redis/keys.hpp"

namespace smartlb::testing {
namespace shared_in_flight_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using redis::RedisService;
using redis::SharedInFlight;

constexpr const char* kStreamBody = R"({"messages":[{"role":"user","content":"hi"}],"stream":true})";

struct Replica {
  Replica(const std::string& id, const std::string& backend_url, std::int64_t max_in_flight) : id(id) {
    proxy.add_backend("only", backend_url);
    config::ClientConfig c;
    c.name = "batch";
    c.key = "batch-key-1";
    c.limits.max_in_flight = max_in_flight;
    proxy.cfg.policy.clients.push_back(c);
    proxy.start();
  }
  ~Replica() {
    if (service) service->stop();  // nothing runs on the Redis thread any more
    proxy.stop();
    in_flight.reset();
  }

  void connect(const RedisServer& server) {
    service = std::make_unique<RedisService>(proxy.clock, test_redis_options(server.url(), id));
    redis::SharedInFlightOptions o;
    o.tick = 20ms;
    in_flight = std::make_unique<SharedInFlight>(*service, proxy.clock, o);
    proxy.server->budgets().set_in_flight_broker(in_flight.get());
    service->start();
  }

  HttpResponse post(const std::string& body = kBody) {
    return http_call(proxy.port(), "POST", kChat, {{"api-key", "batch-key-1"}}, body);
  }

  // The client's budget on this replica (the one /status and the metrics read).
  clients::ClientBudget::State budget_state() {
    const auto entries = proxy.server->budgets().entries();
    EXPECT_EQ(entries.size(), 1u);
    const base::Clock& clock = proxy.server->states().clock();
    return entries.at(0).budget->state({clock.now(), clock.wall_now()});
  }

  const std::string id;
  ProxyHarness proxy;
  std::unique_ptr<RedisService> service;
  std::unique_ptr<SharedInFlight> in_flight;
};

struct SharedInFlightTest : ::testing::Test {
  MockBackend backend{[](const SeenRequest&) { return MockReply{200, {}, "ok"}; }};
  RedisServer server;

  // How many replicas hold a lease of the client's budget.
  std::int64_t leases(RedisService& via) {
    std::int64_t out = -1;
    std::atomic<bool> done{false};
    via.command({"HLEN", redis::in_flight_key("smartlb:",
                                              "budget:client\x1f"
                                              "batch")},
                [&](redis::RedisResult r) {
                  if (r.ok()) out = r.value->as_integer().value_or(-1);
                  done = true;
                });
    EXPECT_TRUE(await_condition([&] { return done.load(); }));
    return out;
  }

  // One call of the lease script, as replica `id` makes it: {grant, the others' leases}.
  std::pair<std::int64_t, std::int64_t> ask(RedisService& via, const std::string& id, std::int64_t in_use,
                                            std::int64_t want, std::int64_t cap, std::int64_t ttl_ms = 5000) {
    std::pair<std::int64_t, std::int64_t> out{-1, -1};
    std::atomic<bool> done{false};
    via.eval(SharedInFlight::script(), {redis::in_flight_key("smartlb:", "budget:x")},
             {id, std::to_string(in_use), std::to_string(want), std::to_string(cap), std::to_string(ttl_ms)},
             [&](redis::RedisResult r) {
               if (r.ok() && r.value->elements.size() == 2)
                 out = {r.value->elements[0].as_integer().value_or(-1),
                        r.value->elements[1].as_integer().value_or(-1)};
               done = true;
             });
    EXPECT_TRUE(await_condition([&] { return done.load(); }));
    return out;
  }
};

// The case the cap is for: a caller's stream held on one replica, its next request on another.
// Without the shared cap, each replica would admit up to max_in_flight of its own.
TEST_F(SharedInFlightTest, ARequestOnAnotherReplicaMeetsTheCapThatOneReplicasStreamHolds) {
  const GatePtr last_event = backend.make_gate();
  backend.set_handler(stream_held_before_last_event(last_event));
  Replica a("replica-a", backend.url(), 1), b("replica-b", backend.url(), 1);
  a.connect(server);
  b.connect(server);
  ASSERT_TRUE(a.service->up() && b.service->up());
  HttpResponse streamed;
  std::thread holder([&] { streamed = a.post(kStreamBody); });
  ASSERT_TRUE(await_condition([&] { return backend.request_count() == 1; }));

  const HttpResponse refused = b.post();
  EXPECT_EQ(refused.status, 429u);
  EXPECT_EQ(refused.body,
            http::openai_error_json("Too many requests in flight for client 'batch': Limit 1, In flight 1. "
                                    "Please try again in 1s or when one of them has ended.",
                                    "requests", "rate_limit_exceeded"));
  EXPECT_EQ(backend.request_count(), 1u) << "no backend called for the refused request";
  const clients::ClientBudget::State seen = b.budget_state();
  EXPECT_EQ(seen.in_flight, 0) << "none on replica b";
  EXPECT_EQ(seen.in_flight_everywhere, 1) << "a's stream, as b's ask learnt it (/status, metrics)";

  backend.open(last_event);
  holder.join();
  EXPECT_EQ(streamed.status, 200u);
  // The stream ended: replica a gives its slot back at its next tick. Then no replica holds a
  // lease, and a's next request waits for one round trip to Redis and is served, not refused.
  EXPECT_TRUE(await_condition([&] { return leases(*a.service) == 0; }));
  EXPECT_EQ(a.post().status, 200u);
  EXPECT_EQ(backend.request_count(), 2u);
  // b, told no while the stream held the slot, asks again from its next tick on.
  EXPECT_TRUE(await_condition([&] { return b.post().status == 200u; }));
}

TEST_F(SharedInFlightTest, TheScriptGrantsAtMostTheCapLessTheOthersLeasesAndAtLeastWhatIsInUse) {
  Replica r("reader", backend.url(), 0);
  r.connect(server);
  ASSERT_TRUE(r.service->up());
  EXPECT_EQ(ask(*r.service, "one", 0, 3, 4), std::make_pair(std::int64_t{3}, std::int64_t{0}));
  EXPECT_EQ(ask(*r.service, "two", 0, 3, 4), std::make_pair(std::int64_t{1}, std::int64_t{3}));
  EXPECT_EQ(ask(*r.service, "two", 2, 3, 4), std::make_pair(std::int64_t{2}, std::int64_t{3}))
      << "what a replica holds in flight already runs: granted, even past the cap";
  EXPECT_EQ(ask(*r.service, "one", 1, 1, 4), std::make_pair(std::int64_t{1}, std::int64_t{2}))
      << "given back";
  EXPECT_EQ(ask(*r.service, "two", 2, 3, 4), std::make_pair(std::int64_t{3}, std::int64_t{1}));
  EXPECT_EQ(ask(*r.service, "one", 0, 0, 4), std::make_pair(std::int64_t{0}, std::int64_t{3})) << "all back";
  EXPECT_EQ(ask(*r.service, "two", 3, 4, 4), std::make_pair(std::int64_t{4}, std::int64_t{0}));
}

TEST_F(SharedInFlightTest, AReplicaThatDiesLeavesNoSlotTakenPastItsLeasesTimeToLive) {
  Replica r("reader", backend.url(), 0);
  r.connect(server);
  ASSERT_TRUE(r.service->up());
  // "gone" takes the whole cap with a short lease and is never heard from again.
  EXPECT_EQ(ask(*r.service, "gone", 2, 2, 2, /*ttl_ms=*/2000).first, 2);
  EXPECT_EQ(ask(*r.service, "alive", 0, 1, 2).first, 0);
  EXPECT_TRUE(await_condition([&] { return ask(*r.service, "alive", 0, 1, 2).first == 1; }))
      << "the dead replica's lease expired: its slots are free";
  EXPECT_EQ(ask(*r.service, "alive", 0, 2, 2), std::make_pair(std::int64_t{2}, std::int64_t{0}));
}

}  // namespace shared_in_flight_test
}  // namespace smartlb::testing
