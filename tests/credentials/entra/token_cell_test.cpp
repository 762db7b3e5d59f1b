#include "smartlb/credentials/entra/token_cell.hpp"

#include <gtest/gtest.h>

namespace smartlb::credentials::entra {
namespace token_cell_test {  // named, not anonymous: tests/CMakeLists.txt

using A = TokenCell::Availability;
const WallTime kExpires{std::chrono::seconds(1'800'003'600)};

TEST(TokenCell, RequestsWaitForTheFirstFetch) {
  TokenCell c("c", config::EntraSource::Imds, "s");
  EXPECT_EQ(c.look(100).availability, A::Pending);
  std::string out;
  EXPECT_FALSE(c.append_authorization(out));
  EXPECT_EQ(c.status().state, "starting");
}

TEST(TokenCell, ATokenIsReadyUntilItsUsableEnd) {
  TokenCell c("c", config::EntraSource::Imds, "s");
  c.fetch_succeeded({"tok-1", kExpires}, 1000);
  EXPECT_EQ(c.look(999).availability, A::Ready);
  EXPECT_EQ(c.look(1000).availability, A::Unavailable);
  std::string out = "GET / HTTP/1.1\r\n";
  EXPECT_TRUE(c.append_authorization(out));
  EXPECT_EQ(out, "GET / HTTP/1.1\r\nAuthorization: Bearer tok-1\r\n");
  EXPECT_EQ(c.status().state, "valid");
  EXPECT_EQ(c.status().expires_at, kExpires);
}

TEST(TokenCell, WaitersAreWokenOnceWhenTheFetchEnds) {
  TokenCell c("c", config::EntraSource::Imds, "s");
  int woken = 0;
  const auto t1 = c.on_next_result([&] { ++woken; });
  const auto t2 = c.on_next_result([&] { ++woken; });
  const auto t3 = c.on_next_result([&] { woken += 100; });
  EXPECT_NE(t1, 0u);
  EXPECT_NE(t2, t1);
  c.forget_waiter(t3);  // its request gave up
  c.fetch_succeeded({"tok", kExpires}, 1000);
  EXPECT_EQ(woken, 2);
  // No fetch under way: nothing to wait for.
  EXPECT_EQ(c.on_next_result([&] { ++woken; }), 0u);
  c.fetch_started();
  EXPECT_NE(c.on_next_result([&] { ++woken; }), 0u);
  c.fetch_failed("boom", 5000, true);
  EXPECT_EQ(woken, 3);
}

TEST(TokenCell, AFailedRefreshKeepsAValidTokenAndSaysFailing) {
  TokenCell c("c", config::EntraSource::Imds, "s");
  c.fetch_succeeded({"tok", kExpires}, 1000);
  c.fetch_started();
  EXPECT_EQ(c.status().state, "refreshing");
  EXPECT_EQ(c.look(10).availability, A::Ready);  // a refresh never makes requests wait
  c.fetch_failed("token endpoint answered HTTP 500", 500, true);
  EXPECT_EQ(c.look(10).availability, A::Ready);
  const auto s = c.status();
  EXPECT_EQ(s.state, "failing");
  EXPECT_EQ(s.last_error, "token endpoint answered HTTP 500");
  EXPECT_EQ(s.refreshes_ok, 1u);
  EXPECT_EQ(s.refreshes_failed, 1u);
}

TEST(TokenCell, NoValidTokenAfterAFailureMeansUnavailableUntilTheRetry) {
  TokenCell c("c", config::EntraSource::Imds, "s");
  c.fetch_failed("connecting: refused", 7000, false);
  const auto l = c.look(10);
  EXPECT_EQ(l.availability, A::Unavailable);
  EXPECT_EQ(l.retry_at, 7000);
  EXPECT_EQ(c.status().state, "unavailable");
  c.fetch_started();
  EXPECT_EQ(c.look(7000).availability, A::Pending);
}

TEST(TokenCell, ARefreshRequestReachesTheServiceHook) {
  TokenCell c("c", config::EntraSource::Imds, "s");
  c.request_refresh();  // no service: nothing happens
  int requested = 0;
  c.on_refresh_request([&] { ++requested; });
  c.request_refresh();
  EXPECT_EQ(requested, 1);
  c.on_refresh_request(nullptr);
  c.request_refresh();
  EXPECT_EQ(requested, 1);
}

TEST(TokenCell, StatusNeverHoldsTheToken) {
  TokenCell c("imds abc https://cognitiveservices.azure.com/.default", config::EntraSource::Imds, "s");
  c.add_backend("east");
  c.add_backend("east");
  c.fetch_succeeded({"very-secret-token", kExpires}, 1000);
  const auto s = c.status();
  EXPECT_EQ(s.backends, std::vector<std::string>{"east"});
  for (const std::string& text : {s.name, s.scope, s.state, s.last_error})
    EXPECT_EQ(text.find("very-secret-token"), std::string::npos);
}

}  // namespace token_cell_test
}  // namespace smartlb::credentials::entra
