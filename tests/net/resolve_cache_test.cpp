#include "smartlb/net/resolve_cache.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb {
namespace resolve_cache_test {  // named, not anonymous: tests/CMakeLists.txt

using Addresses = std::vector<std::string>;
constexpr base::MonoNanos kSecond = 1'000'000'000;

TEST(ResolveCache, NothingBeforeTheFirstLookup) {
  net::ResolveCache<Addresses> cache(2);
  EXPECT_EQ(cache.find(0, 0), nullptr);
  EXPECT_EQ(cache.find(1, 100 * kSecond), nullptr);
}

TEST(ResolveCache, ReusedWithinTheTtlAndNotAfter) {
  net::ResolveCache<Addresses> cache(1, 30 * kSecond);
  cache.store(0, {"10.0.0.1", "10.0.0.2"}, 100 * kSecond);
  const Addresses* hit = cache.find(0, 129 * kSecond);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(*hit, (Addresses{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(cache.find(0, 130 * kSecond), nullptr);  // exactly one TTL later: look up again
}

TEST(ResolveCache, EntriesArePerBackend) {
  net::ResolveCache<Addresses> cache(2);
  cache.store(1, {"10.0.0.9"}, 0);
  EXPECT_EQ(cache.find(0, kSecond), nullptr);
  ASSERT_NE(cache.find(1, kSecond), nullptr);
  cache.forget(1);
  EXPECT_EQ(cache.find(1, kSecond), nullptr);
}

TEST(ResolveCache, AFreshLookupReplacesTheOldOneAndRestartsTheTtl) {
  net::ResolveCache<Addresses> cache(1, 30 * kSecond);
  cache.store(0, {"10.0.0.1"}, 0);
  cache.store(0, {"10.0.0.7"}, 20 * kSecond);
  const Addresses* hit = cache.find(0, 45 * kSecond);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(*hit, Addresses{"10.0.0.7"});
}

}  // namespace resolve_cache_test
}  // namespace smartlb
