// New connections to a host-name backend that start while its name is being looked up wait
// for that lookup instead of starting their own (Asio runs lookups one at a time, so a burst
// would queue behind itself), all of them get its answer, good or bad, and none waits for it
// longer than CONNECT_TIMEOUT.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "smartlb/config/url.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {
namespace upstream_lookup_test {  // named, not anonymous: tests/CMakeLists.txt

using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                         asio::wait_traits<std::chrono::steady_clock>, Executor>;

class LookupCounter final : public telemetry::RequestObserver {
 public:
  void on_request(const telemetry::RequestRecord&) override {}
  void on_dns_lookup(std::size_t, bool ok) override { ++(ok ? ok_ : failed_); }
  int ok_ = 0, failed_ = 0;
};

// One backend, "http://backend.test:<port>", whose lookup the test holds until it opens `gate`.
struct LookupFixture : ::testing::Test {
  asio::io_context ioc;
  io::DeadlineSweeper sweeper{ioc};
  io::Acceptor listener{ioc.get_executor(), {asio::ip::address_v4::loopback(), 0}};
  config::Config cfg;
  ssl::context tls{ssl::context::tls_client};
  base::ManualClock clock;
  LookupCounter observer;
  Timer gate{ioc.get_executor()};
  int lookups = 0;
  bool answer_fails = false;
  std::vector<ConnectResult> results;
  std::size_t completed = 0;

  void SetUp() override {
    auto parsed =
        config::parse_backend_url("http://backend.test:" + std::to_string(listener.local_endpoint().port()));
    ASSERT_TRUE(parsed.url) << parsed.error;
    config::BackendConfig b;
    b.id = 1;
    b.name = "named";
    b.url = *parsed.url;
    cfg.backends.push_back(b);
    gate.expires_at(std::chrono::steady_clock::time_point::max());
  }

  UpstreamPool::LookupFn held_lookup() {
    return [this](const std::string&, std::uint16_t port, error_code& ec) -> Task<UpstreamPool::Endpoints> {
      ++lookups;
      co_await gate.async_wait(use_tuple);  // until the test opens the gate
      if (answer_fails) {
        ec = asio::error::host_not_found;
        co_return UpstreamPool::Endpoints{};
      }
      co_return UpstreamPool::Endpoints{tcp::endpoint(asio::ip::address_v4::loopback(), port)};
    };
  }

  // Every connect failed before a TCP connect, with `detail` in its message.
  void expect_all_failed_resolving(const std::string& detail) {
    for (const auto& r : results) {
      EXPECT_FALSE(r.conn);
      EXPECT_EQ(r.failure, routing::TransportFailure::Connect);
      EXPECT_NE(r.detail.find(detail), std::string::npos) << r.detail;
    }
  }

  // Starts `n` connects to the backend together, and runs them until each waits.
  void start_connects(UpstreamPool& pool, int n) {
    results.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      asio::co_spawn(
          ioc,
          [&pool, this, i]() -> Task<> {
            results[static_cast<std::size_t>(i)] =
                co_await pool.connect(routing::BackendId{0}, cfg.backends[0].url);
            ++completed;
          },
          asio::detached);
    while (ioc.poll() > 0) {
    }
  }
};

TEST_F(LookupFixture, ConnectsThatStartTogetherShareOneLookup) {
  UpstreamPool pool(sweeper, cfg, tls, clock, &observer, held_lookup());
  start_connects(pool, 5);
  EXPECT_EQ(lookups, 1) << "the other four wait for the first one's answer";
  gate.cancel();
  ioc.run();
  for (const auto& r : results) EXPECT_TRUE(r.conn) << r.detail;
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(observer.ok_, 1);
}

TEST_F(LookupFixture, AFailedLookupFailsEveryConnectThatWaitedForIt) {
  answer_fails = true;
  UpstreamPool pool(sweeper, cfg, tls, clock, &observer, held_lookup());
  start_connects(pool, 3);
  gate.cancel();
  ioc.run();
  expect_all_failed_resolving("resolve: ");
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(observer.failed_, 1);
}

TEST_F(LookupFixture, AfterAFailureTheNextConnectLooksUpAgain) {
  answer_fails = true;
  UpstreamPool pool(sweeper, cfg, tls, clock, &observer, held_lookup());
  start_connects(pool, 1);
  gate.cancel();
  ioc.run();
  ASSERT_FALSE(results[0].conn);

  answer_fails = false;
  ioc.restart();
  gate.expires_at(std::chrono::steady_clock::time_point::max());
  start_connects(pool, 1);
  gate.cancel();
  ioc.run();
  EXPECT_TRUE(results[0].conn) << results[0].detail;
  EXPECT_EQ(lookups, 2);
}

TEST_F(LookupFixture, ALookupWithoutAnAnswerFailsTheConnectsAtTheConnectTimeout) {
  cfg.connect_timeout = std::chrono::seconds(1);
  UpstreamPool pool(sweeper, cfg, tls, clock, &observer, held_lookup());
  start_connects(pool, 2);
  // The gate stays shut: only the deadline ends them. (Bounded, so that a missing deadline
  // fails here instead of hanging the suite; the bound is a safety net, not a speed check.)
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (completed < 2 && std::chrono::steady_clock::now() < give_up)
    ioc.run_one_for(std::chrono::milliseconds(100));
  ASSERT_EQ(completed, 2u) << "the connects did not end at the lookup's deadline";
  expect_all_failed_resolving("resolve: " + error_code(asio::error::timed_out).message());
  EXPECT_EQ(observer.ok_ + observer.failed_, 0) << "the lookup itself has not ended";

  // The answer, when it comes late, is kept for the next connect.
  gate.cancel();
  ioc.run();
  EXPECT_EQ(observer.ok_, 1);
  ioc.restart();
  start_connects(pool, 1);
  ioc.run();
  EXPECT_TRUE(results[0].conn) << results[0].detail;
  EXPECT_EQ(lookups, 1);
}

}  // namespace upstream_lookup_test
}  // namespace smartlb::net
