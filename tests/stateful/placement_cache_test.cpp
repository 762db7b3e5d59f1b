#include "smartlb/stateful/placement_cache.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb::stateful {
namespace placement_cache_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(PlacementCache, RemembersWhereAnIdWasFound) {
  PlacementCache cache(4);
  EXPECT_EQ(cache.find("resp_1"), std::nullopt);
  cache.learn("resp_1", 7);
  EXPECT_EQ(cache.find("resp_1"), 7u);
  cache.learn("resp_1", 9);
  EXPECT_EQ(cache.find("resp_1"), 9u) << "learning again replaces";
  EXPECT_EQ(cache.size(), 1u);
  cache.forget("resp_1");
  EXPECT_EQ(cache.find("resp_1"), std::nullopt);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(PlacementCache, TheLeastRecentlyUsedGoesWhenFull) {
  PlacementCache cache(3);
  cache.learn("a", 1);
  cache.learn("b", 2);
  cache.learn("c", 3);
  EXPECT_EQ(cache.find("a"), 1u);  // a is now the most recent: b is the least
  cache.learn("d", 4);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.find("b"), std::nullopt);
  EXPECT_EQ(cache.find("a"), 1u);
  EXPECT_EQ(cache.find("c"), 3u);
  EXPECT_EQ(cache.find("d"), 4u);
  cache.learn("c", 5);  // relearning refreshes too: a is now the least recent
  cache.learn("e", 6);
  EXPECT_EQ(cache.find("a"), std::nullopt);
  EXPECT_EQ(cache.find("c"), 5u);
}

TEST(PlacementCache, StaysWithinItsCapacity) {
  PlacementCache cache;
  EXPECT_EQ(cache.capacity(), 8192u);
  for (int i = 0; i < 20000; ++i) cache.learn("id_" + std::to_string(i), static_cast<std::uint64_t>(i));
  EXPECT_EQ(cache.size(), 8192u);
  EXPECT_EQ(cache.find("id_19999"), 19999u);
  EXPECT_EQ(cache.find("id_11807"), std::nullopt);
  EXPECT_EQ(cache.find("id_11808"), 11808u);
}

}  // namespace placement_cache_test
}  // namespace smartlb::stateful
