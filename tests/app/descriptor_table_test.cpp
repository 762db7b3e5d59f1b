#include "smartlb/app/descriptor_table.hpp"

#include <fcntl.h>
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <limits>

namespace smartlb {
namespace descriptor_table_test {  // named, not anonymous: tests/CMakeLists.txt

std::size_t open_descriptors() {
  const std::filesystem::directory_iterator fds("/proc/self/fd");
  return static_cast<std::size_t>(std::distance(begin(fds), end(fds)));
}

TEST(DescriptorTable, RoomForTwoDescriptorsPerConnectionAndSomeHeadroomWithinTheLimit) {
  EXPECT_EQ(app::descriptors_to_reserve(16384, 1'048'576), 33'792u);
  EXPECT_EQ(app::descriptors_to_reserve(16384, 20'000), 20'000u);
  EXPECT_EQ(app::descriptors_to_reserve(1, 1'048'576), 1'026u);
  EXPECT_EQ(app::descriptors_to_reserve(static_cast<std::size_t>(-1), 4096), 4096u);
}

TEST(DescriptorTable, ReservingGrowsTheTableOnceAndLeavesNoDescriptorOpen) {
  const std::size_t limit = app::raise_descriptor_limit();
  const std::size_t before = app::descriptor_table_size();
  ASSERT_GT(before, 0u) << "FDSize in /proc/self/status";
  if (before >= limit) GTEST_SKIP() << "the table already holds the limit's " << limit << " descriptors";
  const std::size_t target = std::min(limit, 4 * before);
  const std::size_t open_before = open_descriptors();

  ASSERT_TRUE(app::reserve_descriptor_table(target));

  EXPECT_GE(app::descriptor_table_size(), target);
  EXPECT_EQ(::fcntl(static_cast<int>(target - 1), F_GETFD), -1) << "the probe was closed";
  EXPECT_EQ(open_descriptors(), open_before);
}

TEST(DescriptorTable, ReservingBeyondTheLimitFailsWithoutLeaving) {
  const std::size_t limit = app::raise_descriptor_limit();
  if (limit >= static_cast<std::size_t>(std::numeric_limits<int>::max())) GTEST_SKIP() << "no limit";
  const std::size_t open_before = open_descriptors();
  EXPECT_FALSE(app::reserve_descriptor_table(limit + 1));
  EXPECT_EQ(open_descriptors(), open_before);
}

}  // namespace descriptor_table_test
}  // namespace smartlb
