// A pooled upstream connection waits without its read buffer: its room is kept by the pool for
// the next connection that reads, so that a burst's idle connections (up to 256 per backend and
// worker) do not hold 16 KiB each. Real sockets on 127.0.0.1.
#include <gtest/gtest.h>

#include "smartlb/config/url.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {
namespace upstream_pool_test {  // named, not anonymous: tests/CMakeLists.txt

struct PoolFixture : ::testing::Test {
  asio::io_context ioc;
  io::DeadlineSweeper sweeper{ioc};
  io::Acceptor listener{ioc.get_executor(), {asio::ip::address_v4::loopback(), 0}};
  io::Socket accepted{ioc.get_executor()};
  config::Config cfg;
  ssl::context tls{ssl::context::tls_client};
  base::ManualClock clock;
  UpstreamPool pool{sweeper, cfg, tls, clock};

  // A new connection to the listener (accepted, so that it stays alive while pooled).
  UpstreamPtr connect() {
    auto parsed =
        config::parse_backend_url("http://127.0.0.1:" + std::to_string(listener.local_endpoint().port()));
    EXPECT_TRUE(parsed.url) << parsed.error;
    ConnectResult r;
    asio::co_spawn(
        ioc, [&]() -> Task<> { r = co_await pool.connect(routing::BackendId{0}, *parsed.url); },
        asio::detached);
    listener.async_accept(accepted, [](error_code) {});
    ioc.run();
    ioc.restart();
    EXPECT_TRUE(r.conn) << r.detail;
    return std::move(r.conn);
  }
};

TEST_F(PoolFixture, AnIdleConnectionHoldsNoReadBufferAndGetsOneBackWhenTaken) {
  UpstreamPtr conn = connect();
  ASSERT_TRUE(conn);
  ASSERT_GE(conn->buffer.capacity(), UpstreamConnection::kBufferBytes);
  pool.release(std::move(conn));
  EXPECT_EQ(pool.idle_count(), 1u);
  EXPECT_EQ(pool.idle_buffer_bytes(), 0u) << "its room waits in the pool's, not in the idle connection";
  UpstreamPtr again = pool.take_pooled(routing::BackendId{0});
  ASSERT_TRUE(again);
  EXPECT_GE(again->buffer.capacity(), UpstreamConnection::kBufferBytes)
      << "a response's room, for its next read";
}

}  // namespace upstream_pool_test
}  // namespace smartlb::net
