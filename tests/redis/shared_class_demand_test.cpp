// Priority classes' demand shared by two replicas through a real redis-server: the interactive
// requests one replica sends to a target are demand that the batch requests the other sends
// there leave room for, as if one replica had sent both.
#include "smartlb/redis/shared_class_demand.hpp"

#include <gtest/gtest.h>

#include "await_condition.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"
#include "smartlb/base/random.hpp"
#include "smartlb/routing/selectors/priority_selector.hpp"

namespace smartlb::testing {
namespace shared_class_demand_test {  // named, not anonymous: tests/CMakeLists.txt

const routing::ClassReserve kInteractive{};
const routing::ClassReserve kBatch{1, 200};  // leaves at most 20 %

// One replica's routing state: target "a" declares 1,000 tokens per second, on a clock that
// stands still (what is used stays used).
struct Replica {
  Replica(const std::string& id, const RedisServer& server) {
    routing::PoolMember a{"a", 1, 1, "", 1'000, 0};
    a.quota_window = std::chrono::seconds(1);
    table = std::make_unique<routing::RoutingTable>(std::vector<routing::PoolMember>{a});
    states.track(*table);
    service = std::make_unique<redis::RedisService>(clock, test_redis_options(server.url(), id));
    demand = std::make_unique<redis::SharedClassDemand>(*service, states, clock);
    service->start();
  }
  ~Replica() {
    service->stop();  // no callback after this
    demand.reset();
  }
  bool send(std::int64_t tokens, routing::ClassReserve cls) {
    return states.reserve(table->member(0), "gpt", tokens, cls);
  }
  bool batch_fits(std::int64_t tokens) const {
    base::ScriptedRandom rng({0});
    routing::TriedSet tried;
    return priority.pick(*table, states, {"gpt", tried, tokens, {}, base::Nanos{0}, kBatch}, rng).has_value();
  }

  base::ManualClock clock;
  routing::BackendStates states{clock, routing::CooldownPolicy{}};
  std::unique_ptr<routing::RoutingTable> table;
  routing::PrioritySelector priority;
  std::unique_ptr<redis::RedisService> service;
  std::unique_ptr<redis::SharedClassDemand> demand;
};

TEST(SharedClassDemand, ABatchRequestLeavesRoomForTheInteractiveRequestsAnotherReplicaSends) {
  RedisServer server;
  Replica one("replica-1", server), two("replica-2", server);
  ASSERT_TRUE(await_condition([&] { return one.service->up() && two.service->up(); }));
  ASSERT_TRUE(two.send(800, kBatch));  // replica 2: batch only, 800 of its 1,000 used
  EXPECT_TRUE(two.batch_fits(150)) << "nothing interactive seen anywhere: batch may take the rest";
  // Replica 1, which never saw a batch request itself, learns that another replica sends some
  // and counts its own demand from then on.
  ASSERT_TRUE(await_condition([&] { return !one.states.class_demand(0).empty(); }));
  // It sends only interactive requests there: 500 tokens now is 250 tokens/s of demand.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(one.send(100, kInteractive));
  ASSERT_TRUE(await_condition([&] { return !two.batch_fits(150); }))
      << "replica 2's batch leaves the share (200) for replica 1's interactive demand";
  EXPECT_FALSE(two.send(150, kBatch)) << "the reservation checks it too";
  EXPECT_TRUE(two.send(150, kInteractive)) << "an interactive request of its own takes it";
}

}  // namespace shared_class_demand_test
}  // namespace smartlb::testing
