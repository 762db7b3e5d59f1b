#include "smartlb/sim/object_ids.hpp"

#include <set>

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace object_ids_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(IdMinter, PrefixAndLowerCaseHexDigits) {
  IdMinter ids(42);
  const std::string id = ids.next("resp_", 48);
  ASSERT_EQ(id.size(), 5u + 48u);
  EXPECT_TRUE(id.starts_with("resp_"));
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 5), std::string::npos) << id;
  EXPECT_EQ(ids.next("file-", 32).size(), 5u + 32u);
}

TEST(IdMinter, SameSeedSameIdsAndNoRepeats) {
  IdMinter a(7);
  IdMinter b(7);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = a.next("x", 24);
    EXPECT_EQ(id, b.next("x", 24));
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
}

TEST(IdMinter, SeedsOfDifferentSimsMintDifferentIds) {
  IdMinter a(1);
  IdMinter b(2);
  EXPECT_NE(a.next("resp_", 48), b.next("resp_", 48));
  IdMinter c(3);
  IdMinter forked(c.fork_seed());
  EXPECT_NE(c.next("resp_", 48), forked.next("resp_", 48));
}

}  // namespace object_ids_test
}  // namespace smartlb::sim
