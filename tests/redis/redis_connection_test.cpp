// RedisConnection against a real redis-server on 127.0.0.1: commands, pipelining, AUTH,
// TLS with a test CA, pub/sub pushes, and a slow or dead server noticed as lost.
#include "smartlb/redis/redis_connection.hpp"

#include <gtest/gtest.h>

#include <boost/asio/use_future.hpp>

#include <future>

#include "mock_backend.hpp"
#include "redis_server.hpp"

namespace smartlb::redis {
namespace redis_connection_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using testing::RedisServer;
using testing::RedisServerOptions;
namespace asio = io::asio;

RedisEndpoint endpoint_for(const std::string& url_text) {
  auto parsed = config::parse_redis_url(url_text);
  if (!parsed.url) throw std::invalid_argument(parsed.error);
  RedisEndpoint e;
  e.url = *parsed.url;
  e.client_name = "smartlb-test";
  e.command_timeout = 300ms;
  return e;
}

// A command's arguments (GCC 12 miscompiles a braced list inside a co_await expression).
template <class... A>
std::vector<std::string> cmd(const A&... a) {
  return {std::string(a)...};
}

// Runs `body` as a coroutine on a fresh io_context until it (and what it left running) ends.
template <class F>
auto run(F body) {
  asio::io_context ioc;
  auto future = asio::co_spawn(ioc.get_executor(), std::move(body), asio::use_future);
  ioc.run();
  return future.get();
}

TEST(RedisConnection, CommandsArePipelinedAndAnsweredInOrder) {
  RedisServer server;
  const auto replies = run([&]() -> io::Task<std::vector<std::string>> {
    auto opened = co_await RedisConnection::open(endpoint_for(server.url()), nullptr);
    if (!opened.connection) throw std::runtime_error(opened.error);
    auto c = opened.connection;
    std::vector<std::string> seen;
    // Sent back to back before any reply is read: one write, replies matched in order.
    for (int i = 0; i < 100; ++i)
      c->send({"INCR", "counter"},
              [&seen](RedisResult r) { seen.push_back(std::to_string(*r.value->as_integer())); });
    EXPECT_GT(c->pending(), 1u) << "several commands in flight at once";
    RedisResult last = co_await c->call(cmd("GET", "counter"));
    seen.push_back(last.value->text);
    RedisResult bad = co_await c->call(cmd("INCR"));
    EXPECT_FALSE(bad.ok());
    EXPECT_TRUE(bad.value && bad.value->is_error()) << "an error reply is a reply, the connection stays";
    EXPECT_TRUE(c->is_open());
    c->close();
    co_return seen;
  });
  ASSERT_EQ(replies.size(), 101u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(replies[i], std::to_string(i + 1));
  EXPECT_EQ(replies[100], "100");
}

TEST(RedisConnection, BinaryValuesRoundTrip) {
  RedisServer server;
  const std::string value("a\0b\r\n\xff", 6);
  const auto got = run([&]() -> io::Task<std::string> {
    auto c = (co_await RedisConnection::open(endpoint_for(server.url()), nullptr)).connection;
    co_await c->call(cmd("SET", "k", value));
    auto r = co_await c->call(cmd("GET", "k"));
    c->close();
    co_return r.value->text;
  });
  EXPECT_EQ(got, value);
}

TEST(RedisConnection, PasswordRequiredAndAWrongOneIsAnAuthRefusalWithoutThePassword) {
  RedisServer server(RedisServerOptions{.password = "right-horse-battery"});
  run([&]() -> io::Task<> {
    auto good = co_await RedisConnection::open(endpoint_for(server.url()), nullptr);
    EXPECT_TRUE(good.connection) << good.error;
    if (good.connection) {
      auto pong = co_await good.connection->call(cmd("PING"));
      EXPECT_TRUE(pong.value && pong.value->is("PONG"));
      good.connection->close();
    }
    auto wrong = co_await RedisConnection::open(endpoint_for(server.url("wrong-staple")), nullptr);
    EXPECT_FALSE(wrong.connection);
    EXPECT_TRUE(wrong.auth_rejected);
    EXPECT_NE(wrong.error.find("AUTH"), std::string::npos) << wrong.error;
    EXPECT_EQ(wrong.error.find("wrong-staple"), std::string::npos) << wrong.error;
    auto none = co_await RedisConnection::open(endpoint_for(server.url("")), nullptr);
    EXPECT_FALSE(none.connection);
    EXPECT_TRUE(none.auth_rejected) << none.error;
  });
}

TEST(RedisConnection, SelectsTheDatabaseOfTheUrl) {
  RedisServer server;
  run([&]() -> io::Task<> {
    auto db3 = (co_await RedisConnection::open(endpoint_for(server.url() + "/3"), nullptr)).connection;
    co_await db3->call(cmd("SET", "where", "three"));
    auto db0 = (co_await RedisConnection::open(endpoint_for(server.url()), nullptr)).connection;
    auto r = co_await db0->call(cmd("GET", "where"));
    EXPECT_TRUE(r.value && r.value->is_nil()) << "db 3's key is not in db 0";
    auto name = co_await db0->call(cmd("CLIENT", "GETNAME"));
    EXPECT_EQ(name.value->text, "smartlb-test");
    db3->close();
    db0->close();
  });
}

TEST(RedisConnection, TlsWithATestCaAndHostNameVerification) {
  testing::TestCa ca;
  RedisServer server(RedisServerOptions{.password = {}, .tls = &ca});
  io::ssl::context trusted(io::ssl::context::tls_client);
  trusted.load_verify_file(server.ca_file());
  io::ssl::context untrusted(io::ssl::context::tls_client);
  run([&]() -> io::Task<> {
    auto ok = co_await RedisConnection::open(endpoint_for(server.url()), &trusted);
    EXPECT_TRUE(ok.connection) << ok.error;
    if (ok.connection) {
      auto pong = co_await ok.connection->call(cmd("PING"));
      EXPECT_TRUE(pong.value && pong.value->is("PONG"));
      ok.connection->close();
    }
    auto refused = co_await RedisConnection::open(endpoint_for(server.url()), &untrusted);
    EXPECT_FALSE(refused.connection);
    EXPECT_NE(refused.error.find("TLS"), std::string::npos) << refused.error;
    EXPECT_FALSE(refused.auth_rejected);
    // The certificate names localhost, not 127.0.0.1: the name is checked.
    auto wrong_name = co_await RedisConnection::open(
        endpoint_for("rediss://127.0.0.1:" + std::to_string(server.port())), &trusted);
    EXPECT_FALSE(wrong_name.connection);
  });
}

TEST(RedisConnection, SubscriberGetsPublishedMessagesAsPushes) {
  RedisServer server;
  const auto got = run([&]() -> io::Task<std::vector<std::string>> {
    auto sub = (co_await RedisConnection::open(endpoint_for(server.url()), nullptr)).connection;
    auto pub = (co_await RedisConnection::open(endpoint_for(server.url()), nullptr)).connection;
    std::vector<std::string> messages;
    sub->on_push(
        [&](const RedisValue& v) { messages.push_back(v.elements[1].text + "=" + v.elements[2].text); });
    auto subscribed = co_await sub->call(cmd("SUBSCRIBE", "chan"));
    EXPECT_TRUE(subscribed.ok());
    auto receivers = co_await pub->call(cmd("PUBLISH", "chan", "one"));
    EXPECT_EQ(receivers.value->integer, 1);
    co_await pub->call(cmd("PUBLISH", "other", "ignored"));
    co_await pub->call(cmd("PUBLISH", "chan", "two"));
    // A PING through the subscriber: answered after the messages published before it.
    co_await sub->call(cmd("PING"));
    sub->close();
    pub->close();
    co_return messages;
  });
  EXPECT_EQ(got, (std::vector<std::string>{"chan=one", "chan=two"}));
}

TEST(RedisConnection, ACommandUnansweredPastTheTimeoutMarksTheConnectionLost) {
  RedisServer server;
  run([&]() -> io::Task<> {
    auto c = (co_await RedisConnection::open(endpoint_for(server.url()), nullptr)).connection;
    std::string lost;
    c->on_lost([&](const std::string& why) { lost = why; });
    server.pause();  // accepts bytes, answers nothing
    auto r = co_await c->call(cmd("PING"));
    server.resume();
    EXPECT_FALSE(r.value);
    EXPECT_NE(r.failure.find("no reply within 300 ms"), std::string::npos) << r.failure;
    EXPECT_FALSE(c->is_open());
    EXPECT_EQ(lost, r.failure);
    auto after = co_await c->call(cmd("PING"));
    EXPECT_FALSE(after.value) << "a lost connection fails at once";
  });
}

TEST(RedisConnection, AKilledServerFailsPendingCommandsAndIsToldOnce) {
  RedisServer server;
  run([&]() -> io::Task<> {
    auto c = (co_await RedisConnection::open(endpoint_for(server.url()), nullptr)).connection;
    int told = 0;
    c->on_lost([&](const std::string&) { ++told; });
    server.kill();
    auto r = co_await c->call(cmd("PING"));
    EXPECT_FALSE(r.value);
    EXPECT_FALSE(c->is_open());
    EXPECT_EQ(told, 1);
    auto again = co_await RedisConnection::open(endpoint_for(server.url()), nullptr);
    EXPECT_FALSE(again.connection);
    EXPECT_FALSE(again.auth_rejected);
    EXPECT_NE(again.error.find("cannot connect"), std::string::npos) << again.error;
  });
}

}  // namespace redis_connection_test
}  // namespace smartlb::redis
