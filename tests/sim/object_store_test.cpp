#include "smartlb/sim/object_store.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace object_store_test {  // named, not anonymous: tests/CMakeLists.txt

std::vector<int> values(const ListPage<int>& page) {
  std::vector<int> out;
  for (const int* value : page.items) out.push_back(*value);
  return out;
}

ObjectStore<int> store_of(int count, StoreLimits limits = {100, 1000}) {
  ObjectStore<int> store(limits);
  for (int i = 1; i <= count; ++i) EXPECT_TRUE(store.insert("id" + std::to_string(i), i, 10));
  return store;
}

TEST(ObjectStore, InsertFindErase) {
  ObjectStore<int> store({10, 100});
  EXPECT_TRUE(store.insert("a", 1, 30));
  EXPECT_FALSE(store.insert("a", 2, 1)) << "an id is stored once";
  ASSERT_NE(store.find("a"), nullptr);
  EXPECT_EQ(*store.find("a"), 1);
  EXPECT_EQ(store.find("b"), nullptr);
  EXPECT_EQ(store.bytes(), 30u);
  EXPECT_TRUE(store.erase("a"));
  EXPECT_FALSE(store.erase("a"));
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(store.bytes(), 0u);
}

TEST(ObjectStore, RefusesWhatDoesNotFitByCountOrBytes) {
  ObjectStore<int> by_count({2, 1000});
  EXPECT_TRUE(by_count.insert("a", 1, 1));
  EXPECT_TRUE(by_count.insert("b", 2, 1));
  EXPECT_FALSE(by_count.fits(1));
  EXPECT_FALSE(by_count.insert("c", 3, 1));
  EXPECT_EQ(by_count.find("c"), nullptr);

  ObjectStore<int> by_bytes({100, 50});
  EXPECT_TRUE(by_bytes.insert("a", 1, 40));
  EXPECT_FALSE(by_bytes.insert("b", 2, 11));
  EXPECT_TRUE(by_bytes.insert("b", 2, 10));
  EXPECT_EQ(by_bytes.bytes(), 50u);
}

TEST(ObjectStore, MakeRoomDropsTheOldestFirst) {
  ObjectStore<int> store({3, 1000});
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(store.insert(id, 0, 100));
  ASSERT_TRUE(store.make_room(100));
  EXPECT_EQ(store.find("a"), nullptr);
  EXPECT_NE(store.find("b"), nullptr);
  ASSERT_TRUE(store.insert("d", 0, 100));
  ASSERT_TRUE(store.make_room(850)) << "drops b and c for 850 bytes next to d";
  EXPECT_EQ(store.find("b"), nullptr);
  EXPECT_EQ(store.find("c"), nullptr);
  EXPECT_NE(store.find("d"), nullptr);
}

TEST(ObjectStore, MakeRoomNeverForWhatCannotFit) {
  ObjectStore<int> store({3, 100});
  ASSERT_TRUE(store.insert("a", 0, 10));
  EXPECT_FALSE(store.make_room(101));
  EXPECT_NE(store.find("a"), nullptr) << "nothing dropped in vain";
  ObjectStore<int> none({0, 100});
  EXPECT_FALSE(none.make_room(1));
}

TEST(ObjectStore, ListsNewestFirstByDefaultAndOldestFirstOnRequest) {
  const auto store = store_of(5);
  EXPECT_EQ(values(store.list(ListOrder::NewestFirst, "", 10)), (std::vector<int>{5, 4, 3, 2, 1}));
  EXPECT_EQ(values(store.list(ListOrder::OldestFirst, "", 10)), (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(ObjectStore, PagesWithLimitAfterAndHasMore) {
  const auto store = store_of(5);
  const auto first = store.list(ListOrder::NewestFirst, "", 2);
  EXPECT_EQ(values(first), (std::vector<int>{5, 4}));
  EXPECT_TRUE(first.has_more);
  const auto second = store.list(ListOrder::NewestFirst, "id4", 2);
  EXPECT_EQ(values(second), (std::vector<int>{3, 2}));
  EXPECT_TRUE(second.has_more);
  const auto last = store.list(ListOrder::NewestFirst, "id2", 2);
  EXPECT_EQ(values(last), (std::vector<int>{1}));
  EXPECT_FALSE(last.has_more);
  EXPECT_EQ(values(store.list(ListOrder::OldestFirst, "id3", 10)), (std::vector<int>{4, 5}));
  const auto exact = store.list(ListOrder::OldestFirst, "", 5);
  EXPECT_FALSE(exact.has_more) << "a full last page has nothing more";
}

TEST(ObjectStore, UnknownAfterIsAnEmptyPageAndFiltersApply) {
  const auto store = store_of(6);
  const auto unknown = store.list(ListOrder::NewestFirst, "nope", 10);
  EXPECT_TRUE(unknown.items.empty());
  EXPECT_FALSE(unknown.has_more);
  const auto even = store.list(ListOrder::OldestFirst, "", 2, [](const int& v) { return v % 2 == 0; });
  EXPECT_EQ(values(even), (std::vector<int>{2, 4}));
  EXPECT_TRUE(even.has_more);
}

}  // namespace object_store_test
}  // namespace smartlb::sim
