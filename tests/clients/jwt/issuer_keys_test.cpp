#include "smartlb/clients/jwt/issuer_keys.hpp"

#include <gtest/gtest.h>

namespace smartlb::clients::jwt {
namespace issuer_keys_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr base::MonoNanos kSecond = 1'000'000'000;

TEST(IssuerKeys, RequestsWaitForTheFirstFetchAndAreWokenWhenItEnds) {
  IssuerKeys keys("url");
  EXPECT_FALSE(keys.current());
  EXPECT_TRUE(keys.fetching());
  int woken = 0;
  const auto first = keys.on_next_result([&] { ++woken; });
  const auto second = keys.on_next_result([&] { ++woken; });
  EXPECT_NE(first, 0u);
  keys.forget_waiter(second);  // that request gave up (its timeout)
  keys.fetch_failed("down");
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(keys.on_next_result([&] { ++woken; }), 0u) << "no fetch under way: nothing to wait for";
  EXPECT_EQ(keys.status().state, "unavailable");
  EXPECT_EQ(keys.status().last_error, "down");
}

TEST(IssuerKeys, GrantsOneRefetchPerIntervalAndTellsTheService) {
  IssuerKeys keys("url", std::chrono::minutes(1));
  keys.fetch_succeeded(KeySet{});
  int asked = 0;
  keys.on_refetch_request([&] { ++asked; });
  EXPECT_TRUE(keys.request_refetch(100 * kSecond));
  EXPECT_TRUE(keys.request_refetch(101 * kSecond)) << "under way: worth waiting for, not asked again";
  EXPECT_EQ(asked, 1);
  keys.fetch_succeeded(KeySet{});
  EXPECT_FALSE(keys.request_refetch(159 * kSecond));
  EXPECT_TRUE(keys.request_refetch(160 * kSecond));
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(keys.status().fetches_ok, 2u);
}

}  // namespace issuer_keys_test
}  // namespace smartlb::clients::jwt
