// The relay's readers and per-write arrays are lent by the worker: reused after a relay (or a
// write), never shared by two at once, and only a bounded number kept after a burst.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "smartlb/net/relay_scratch.hpp"

namespace smartlb::net {
namespace relay_scratch_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(RelayScratchLease, AReturnedScratchIsLentAgain) {
  RelayScratchLease::Spares spares;
  RelayScratch* first = nullptr;
  {
    RelayScratchLease lease(spares);
    first = lease.get();
    EXPECT_TRUE(spares.empty());
  }
  ASSERT_EQ(spares.size(), 1u);
  RelayScratchLease again(spares);
  EXPECT_EQ(again.get(), first);
  EXPECT_TRUE(spares.empty());
}

TEST(RelayScratchLease, ConcurrentRelaysGetTheirOwn) {
  RelayScratchLease::Spares spares;
  RelayScratchLease a(spares);
  RelayScratchLease b(spares);
  EXPECT_NE(a.get(), b.get());
}

TEST(RelayScratchLease, AtMostKMaxSpareAreKeptAfterABurst) {
  RelayScratchLease::Spares spares;
  {
    std::vector<std::unique_ptr<RelayScratchLease>> burst;
    for (std::size_t i = 0; i < RelayScratchLease::kMaxSpare + 10; ++i)
      burst.push_back(std::make_unique<RelayScratchLease>(spares));
  }
  EXPECT_EQ(spares.size(), RelayScratchLease::kMaxSpare);
}

TEST(RelayScratchLease, AReturnedScratchKeepsNoResponsesReaders) {
  RelayScratchLease::Spares spares;
  {
    RelayScratchLease lease(spares);
    lease->usage.emplace(telemetry::UsageSniffer::Mode::EventStream);
    lease->held = "data: {}\n\n";
  }
  ASSERT_EQ(spares.size(), 1u);
  EXPECT_FALSE(spares.back()->usage.has_value());
}

TEST(RelayRoundLease, ARoundIsLentAgainAndTwoAtOnceAreTheirOwn) {
  RelayRoundLease::Spares spares;
  RelayRound* first = nullptr;
  {
    RelayRoundLease a(spares);
    RelayRoundLease b(spares);
    EXPECT_NE(a.get(), b.get());
    first = a.get();
  }
  ASSERT_EQ(spares.size(), 2u);
  RelayRoundLease again(spares);
  EXPECT_TRUE(again.get() == first || spares.back().get() == first);
}

}  // namespace relay_scratch_test
}  // namespace smartlb::net
