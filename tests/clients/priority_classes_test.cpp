// Which priority class a request is in: its caller's (by client entry or subject), or a lower
// one it asks for, never a higher one.
#include "smartlb/clients/priority_classes.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace priority_classes_test {  // named, not anonymous: tests/CMakeLists.txt

clients::PriorityClasses three() {
  return clients::PriorityClasses({{"interactive", 0, {}, {}},
                                   {"standard", 100, {"team:web"}, {}},
                                   {"batch", 300, {"team:etl"}, {"nightly"}}});
}

TEST(PriorityClasses, Defaults_AreInteractiveThenBatchLeavingUpToHalf) {
  const clients::PriorityClasses c;
  const auto batch = c.resolve("anyone", {}, "batch");
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->level, 1u);
  EXPECT_EQ(batch->reserve_permille, 500);
  const auto first = c.resolve("anyone", {}, "");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->name, "interactive");
  EXPECT_EQ(first->reserve_permille, 0);
  EXPECT_EQ(c.names(), "interactive, batch");
}

TEST(PriorityClasses, ACallerIsInTheFirstClassThatNamesItsClientOrOneOfItsSubjects) {
  const clients::PriorityClasses c = three();
  const std::vector<std::string> web{"team:web"}, etl{"team:etl"}, both{"team:etl", "team:web"};
  EXPECT_EQ(c.resolve("app", {}, "")->name, "interactive") << "nothing names it: the first class";
  EXPECT_EQ(c.resolve("app", web, "")->name, "standard");
  EXPECT_EQ(c.resolve("app", etl, "")->name, "batch");
  EXPECT_EQ(c.resolve("nightly", {}, "")->name, "batch") << "a client entry's priority_class";
  EXPECT_EQ(c.resolve("app", both, "")->name, "standard") << "the first class that names it";
}

TEST(PriorityClasses, ARequestMayLowerItsClassButNeverRaiseIt) {
  const clients::PriorityClasses c = three();
  const std::vector<std::string> web{"team:web"};
  EXPECT_EQ(c.resolve("app", web, "batch")->name, "batch");
  EXPECT_EQ(c.resolve("app", web, "interactive")->name, "standard") << "asking for more changes nothing";
  EXPECT_EQ(c.resolve("nightly", {}, "interactive")->name, "batch");
  EXPECT_EQ(c.resolve("app", {}, "standard")->reserve_permille, 100);
}

TEST(PriorityClasses, AnUnknownClassIsNone) {
  EXPECT_FALSE(three().resolve("app", {}, "urgent"));
  EXPECT_FALSE(three().resolve("app", {}, "Batch")) << "names are exact";
}

}  // namespace priority_classes_test
}  // namespace smartlb
