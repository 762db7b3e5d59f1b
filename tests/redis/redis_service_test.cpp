// RedisService against a real redis-server: up, lost, back; unreachable at start; refused
// credentials; scripts; the replicas' heartbeats.
#include "smartlb/redis/redis_service.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "await_condition.hpp"
#include "redis_options.hpp"
#include "redis_server.hpp"

namespace smartlb::redis {
namespace redis_service_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using testing::await_condition;
using testing::RedisServer;
using testing::RedisServerOptions;

RedisServiceOptions options_for(const std::string& url, const std::string& replica = "replica-a") {
  return testing::test_redis_options(url, replica);
}

// A command's result, awaited from the test thread.
RedisResult run(RedisService& s, std::vector<std::string> args) {
  auto p = std::make_shared<std::promise<RedisResult>>();
  auto f = p->get_future();
  s.command(std::move(args), [p](RedisResult r) { p->set_value(std::move(r)); });
  return f.get();
}

TEST(RedisService, UpThenLostWhenKilledThenUpAgainWhenRestarted) {
  RedisServer server;
  std::atomic<int> ups{0}, downs{0}, errors{0};
  auto o = options_for(server.url());
  o.on_state = [&](bool up) { ++(up ? ups : downs); };
  o.on_error = [&] { ++errors; };
  base::SystemClock clock;
  RedisService s(clock, o);
  int connected = 0, disconnected = 0;
  s.on_connected([&] { ++connected; });
  s.on_disconnected([&] { ++disconnected; });
  s.start();
  EXPECT_TRUE(s.up()) << "start() returns after the first attempt";
  EXPECT_TRUE(run(s, {"SET", "k", "v"}).ok());

  server.kill();
  ASSERT_TRUE(await_condition([&] { return !s.up(); }));
  const RedisResult down = run(s, {"GET", "k"});
  EXPECT_FALSE(down.value) << "fails at once while down";
  EXPECT_GE(errors.load(), 1);
  EXPECT_FALSE(s.status().last_error.empty());

  server.start();
  ASSERT_TRUE(await_condition([&] { return s.up(); }));
  EXPECT_TRUE(run(s, {"PING"}).ok());
  EXPECT_EQ(ups.load(), 2);
  EXPECT_EQ(downs.load(), 1);
  s.stop();
  EXPECT_EQ(connected, 2) << "the resync hook runs on every connection";
  EXPECT_EQ(disconnected, 1) << "and the loss hook on every loss (not at stop)";
}

TEST(RedisService, ARedisThatStopsAnsweringIsLostAndFoundAgainWhenItAnswers) {
  RedisServer server;
  base::SystemClock clock;
  RedisService s(clock, options_for(server.url()));
  s.start();
  ASSERT_TRUE(s.up());
  server.pause();  // the connections stay open, nothing is answered: the heartbeat times out
  EXPECT_TRUE(await_condition([&] { return !s.up(); }));
  EXPECT_NE(s.status().last_error.find("no reply within"), std::string::npos) << s.status().last_error;
  server.resume();
  EXPECT_TRUE(await_condition([&] { return s.up(); }));
}

TEST(RedisService, UnreachableAtStartIsNotAnErrorAndItConnectsWhenRedisComes) {
  RedisServer server;
  server.kill();
  base::SystemClock clock;
  RedisService s(clock, options_for(server.url()));
  EXPECT_NO_THROW(s.start());
  EXPECT_FALSE(s.up());
  EXPECT_NE(s.status().last_error.find("cannot connect"), std::string::npos) << s.status().last_error;
  server.start();
  EXPECT_TRUE(await_condition([&] { return s.up(); }));
}

TEST(RedisService, AWrongPasswordIsAStartErrorThatNamesRedisUrlButNotThePassword) {
  RedisServer server(RedisServerOptions{.password = "the-right-one"});
  base::SystemClock clock;
  RedisService s(clock, options_for(server.url("not-the-right-one")));
  try {
    s.start();
    FAIL() << "start() must throw";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("REDIS_URL"), std::string::npos) << what;
    EXPECT_EQ(what.find("not-the-right-one"), std::string::npos) << what;
    EXPECT_EQ(what.find("the-right-one"), std::string::npos) << what;
  }
  EXPECT_EQ(s.status().url.find("not-the-right-one"), std::string::npos);
}

TEST(RedisService, ScriptsRunWithEvalshaAndFallBackToEvalOnNoscript) {
  RedisServer server;
  base::SystemClock clock;
  RedisService s(clock, options_for(server.url()));
  s.start();
  static const RedisScript script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
  auto eval = [&](const std::string& by) {
    auto p = std::make_shared<std::promise<RedisResult>>();
    auto f = p->get_future();
    s.eval(script, {"n"}, {by}, [p](RedisResult r) { p->set_value(std::move(r)); });
    return f.get();
  };
  EXPECT_EQ(eval("2").value->integer, 2) << "first: NOSCRIPT, then EVAL";
  EXPECT_EQ(eval("3").value->integer, 5) << "then EVALSHA";
  EXPECT_TRUE(run(s, {"SCRIPT", "FLUSH"}).ok());
  // post() runs on the Redis thread, in order with the commands' callbacks.
  auto on_redis_thread = std::make_shared<std::promise<std::thread::id>>();
  s.post([on_redis_thread] { on_redis_thread->set_value(std::this_thread::get_id()); });
  auto callback_thread = std::make_shared<std::promise<std::thread::id>>();
  s.command({"PING"},
            [callback_thread](RedisResult) { callback_thread->set_value(std::this_thread::get_id()); });
  EXPECT_EQ(on_redis_thread->get_future().get(), callback_thread->get_future().get());
  EXPECT_EQ(eval("1").value->integer, 6) << "the server forgot it: EVAL again";
  EXPECT_EQ(run(s, {"SCRIPT", "EXISTS", script.sha1}).value->elements.at(0).integer, 1);
}

TEST(RedisService, ReplicasSeeEachOtherThroughTheirHeartbeats) {
  RedisServer server;
  base::SystemClock clock;
  RedisService a(clock, options_for(server.url(), "replica-a"));
  RedisService b(clock, options_for(server.url(), "replica-b"));
  a.start();
  b.start();
  ASSERT_TRUE(await_condition([&] { return a.live_replicas() == 2 && b.live_replicas() == 2; }));
  const RedisStatus st = a.status();
  ASSERT_EQ(st.replicas.size(), 2u);
  EXPECT_EQ(st.replicas[0].id == "replica-a" ? st.replicas[1].id : st.replicas[0].id, "replica-b");
  EXPECT_FALSE(st.replicas[0].host.empty());
  EXPECT_GT(st.replicas[0].started_ms, 0);
  EXPECT_TRUE(st.up);
  EXPECT_EQ(st.replica_id, "replica-a");
  b.stop();  // deregisters
  EXPECT_TRUE(await_condition([&] { return a.live_replicas() == 1; }));
  // Entries written by someone else, with odd types and scores, are listed, not a failure.
  EXPECT_TRUE(run(a, {"ZADD", "smartlb:{replicas}", "+inf", "odd"}).ok());
  EXPECT_TRUE(run(a, {"HSET", "smartlb:{replicas}:info", "odd", R"({"host":7,"started_ms":"x"})"}).ok());
  EXPECT_TRUE(await_condition([&] { return a.live_replicas() == 2; }));
  EXPECT_TRUE(a.up());
}

TEST(RedisService, TlsWithTheCaOfRedisCaFile) {
  testing::TestCa ca;
  RedisServer server(RedisServerOptions{.password = {}, .tls = &ca});
  auto o = options_for(server.url());
  o.config.ca_file = server.ca_file();
  base::SystemClock clock;
  RedisService s(clock, o);
  s.start();
  EXPECT_TRUE(s.up()) << s.status().last_error;
  EXPECT_TRUE(run(s, {"PING"}).ok());
}

}  // namespace redis_service_test
}  // namespace smartlb::redis
