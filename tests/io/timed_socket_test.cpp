// Deadlines by sweep: a socket past its deadline is closed and its operation reports a
// timeout; sockets without one keep neither the socket nor the io_context busy.
#include <gtest/gtest.h>

#include <memory>

#include "smartlb/io/timed_socket.hpp"

namespace smartlb::io {
namespace timed_socket_test {  // named, not anonymous: tests/CMakeLists.txt

// A connected pair of TCP sockets on 127.0.0.1.
struct Pair {
  explicit Pair(asio::io_context& ioc)
      : acceptor(ioc.get_executor(), {asio::ip::address_v4::loopback(), 0}),
        a(ioc.get_executor()),
        b(ioc.get_executor()) {
    a.connect(acceptor.local_endpoint());
    acceptor.accept(b);
  }
  Acceptor acceptor;
  Socket a, b;
};

TEST(TimedSocket, AReadPastItsDeadlineEndsAsATimeoutAndClosesTheSocket) {
  asio::io_context ioc;
  DeadlineSweeper sweeper(ioc);
  Pair pair(ioc);
  TimedSocket s(sweeper, std::move(pair.a));
  char byte;
  error_code result;
  bool finished = false;
  s.expires_after(std::chrono::milliseconds(1));
  s.async_read_some(asio::buffer(&byte, 1), [&](error_code ec, std::size_t) {
    result = s.done(ec);
    finished = true;
  });
  ioc.run();  // returns once the read ended and nothing has a deadline any more
  ASSERT_TRUE(finished);
  EXPECT_EQ(result, beast::error::timeout);
  EXPECT_TRUE(s.timed_out());
  EXPECT_FALSE(s.socket().is_open());
}

TEST(TimedSocket, ACompletedOperationIsNotTimedOutLater) {
  asio::io_context ioc;
  DeadlineSweeper sweeper(ioc);
  Pair pair(ioc);
  TimedSocket s(sweeper, std::move(pair.a));
  char byte = 'x';
  error_code result = asio::error::would_block;
  s.expires_after(std::chrono::milliseconds(1));
  asio::write(pair.b, asio::buffer(&byte, 1));
  s.async_read_some(asio::buffer(&byte, 1), [&](error_code ec, std::size_t) { result = s.done(ec); });
  ioc.run();  // the sweeper's timer has nothing armed after done(): run() returns
  EXPECT_FALSE(result);
  EXPECT_FALSE(s.timed_out());
  EXPECT_TRUE(s.socket().is_open());
}

TEST(TimedSocket, OpenSocketsWithoutADeadlineLetTheContextFinish) {
  // Pooled upstream connections sit open with no operation and no deadline: a worker that
  // has nothing else to do must still be able to finish (this hung a drain once).
  asio::io_context ioc;
  DeadlineSweeper sweeper(ioc);
  Pair pair(ioc);
  TimedSocket s(sweeper, std::move(pair.a));
  EXPECT_EQ(sweeper.size(), 1u);
  ioc.run();
  EXPECT_TRUE(s.socket().is_open());
}

TEST(TimedSocket, TheSweeperForgetsDestroyedSockets) {
  asio::io_context ioc;
  DeadlineSweeper sweeper(ioc);
  {
    TimedSocket a(sweeper), b(sweeper), c(sweeper);
    b.expires_after(std::chrono::hours(1));
    EXPECT_EQ(sweeper.size(), 3u);
  }
  EXPECT_EQ(sweeper.size(), 0u);
  ioc.run();  // b's deadline went with it: nothing keeps the timer going
}

}  // namespace timed_socket_test
}  // namespace smartlb::io

#include "smartlb/base/clock.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::io {
namespace timed_socket_test {

TEST(UpstreamPool, AConnectionClosedByItsDeadlineIsNotPooled) {
  // A deadline can pass just as a read completes: the read succeeded, but the sweeper has
  // closed the socket. Such a connection must not go back to the pool.
  asio::io_context ioc;
  DeadlineSweeper sweeper(ioc);
  config::Config cfg;
  ssl::context tls(ssl::context::tls_client);
  base::ManualClock clock;
  net::UpstreamPool pool(sweeper, cfg, tls, clock);

  Pair live(ioc);
  auto open = std::make_unique<net::UpstreamConnection>(sweeper, routing::BackendId{0});
  open->tcp().socket() = std::move(live.a);
  pool.release(std::move(open));
  EXPECT_EQ(pool.idle_count(), 1u);

  Pair cut(ioc);
  auto closed = std::make_unique<net::UpstreamConnection>(sweeper, routing::BackendId{0});
  closed->tcp().socket() = std::move(cut.a);
  char byte;
  closed->tcp().expires_after(std::chrono::milliseconds(1));
  closed->tcp().async_read_some(asio::buffer(&byte, 1),
                                [&](error_code ec, std::size_t) { closed->tcp().done(ec); });
  ioc.run();  // the sweep closes it
  ASSERT_TRUE(closed->tcp().timed_out());
  pool.release(std::move(closed));
  EXPECT_EQ(pool.idle_count(), 1u);
  pool.clear();
}

TEST(TimedSocket, RemovingASocketKeepsTheOthersDeadlines) {
  // The sweeper's table moves its last entry into a removed socket's place: the moved socket
  // keeps its deadline, the one that stays keeps having none.
  asio::io_context ioc;
  DeadlineSweeper sweeper(ioc);
  Pair p1(ioc), p2(ioc), p3(ioc);
  TimedSocket first(sweeper, std::move(p1.a));
  auto middle = std::make_unique<TimedSocket>(sweeper, std::move(p2.a));
  TimedSocket last(sweeper, std::move(p3.a));
  middle->expires_after(std::chrono::hours(1));
  middle.reset();  // armed when it goes: its deadline leaves with it
  EXPECT_EQ(sweeper.size(), 2u);
  char byte;
  error_code result;
  last.expires_after(std::chrono::milliseconds(1));
  last.async_read_some(asio::buffer(&byte, 1), [&](error_code ec, std::size_t) { result = last.done(ec); });
  // Runs out of work only if the moved entry's deadline fired and nothing else stays armed.
  ioc.run_for(std::chrono::seconds(20));
  ASSERT_TRUE(ioc.stopped()) << "a deadline was lost in the move: the sweeper stayed armed";
  EXPECT_EQ(result, beast::error::timeout);
  EXPECT_TRUE(first.socket().is_open()) << "no deadline, not swept";
}

}  // namespace timed_socket_test
}  // namespace smartlb::io
