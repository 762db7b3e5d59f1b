// The other replicas' class demand at a target: each replica's last rates summed while fresh,
// counted until the oldest of them goes stale, bounded whatever the messages say.
#include "smartlb/redis/heard_demand.hpp"

#include <gtest/gtest.h>

namespace smartlb::redis {
namespace heard_demand_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

constexpr base::MonoNanos at(base::Nanos d) { return d.count(); }

routing::ClassDemand::Rates interactive(double tokens_per_second) {
  routing::ClassDemand::Rates r{};
  r[0] = {tokens_per_second, tokens_per_second / 100};
  return r;
}

TEST(HeardDemand, TheReplicasRatesAtATargetAreSummedWhileFresh) {
  HeardDemand heard(1s);
  auto sum = heard.hear("a\ngpt", "replica-1", interactive(300), at(0s));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->rates[0].tokens_per_second, 300);
  EXPECT_EQ(sum->until, at(1s));
  sum = heard.hear("a\ngpt", "replica-2", interactive(200), at(400ms));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->rates[0].tokens_per_second, 500);
  EXPECT_EQ(sum->until, at(1s)) << "until replica 1's rate goes stale, unless it says more";
  sum = heard.hear("a\ngpt", "replica-1", interactive(100), at(600ms));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->rates[0].tokens_per_second, 300) << "a replica's new rate replaces its old one";
  EXPECT_EQ(sum->until, at(1400ms));
  sum = heard.hear("b\ngpt", "replica-1", interactive(50), at(600ms));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->rates[0].tokens_per_second, 50) << "each target apart";
}

TEST(HeardDemand, AReplicaThatStopsSendingDropsOutAfterTheTtl) {
  HeardDemand heard(1s);
  heard.hear("a\ngpt", "replica-1", interactive(300), at(0s));
  const auto sum = heard.hear("a\ngpt", "replica-2", interactive(200), at(1s));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->rates[0].tokens_per_second, 200);
  EXPECT_EQ(sum->until, at(2s));
}

TEST(HeardDemand, ReplicasAndTargetsAreBounded) {
  HeardDemand heard(1s);
  for (std::size_t i = 0; i < HeardDemand::kMaxReplicas; ++i)
    ASSERT_TRUE(heard.hear("a\ngpt", "replica-" + std::to_string(i), interactive(1), at(0s)));
  EXPECT_FALSE(heard.hear("a\ngpt", "one-too-many", interactive(1), at(0s)));
  EXPECT_TRUE(heard.hear("a\ngpt", "replica-0", interactive(2), at(0s))) << "one already heard still is";
  for (std::size_t i = 1; i < HeardDemand::kMaxTargets; ++i)
    heard.hear("t" + std::to_string(i), "replica-0", interactive(1), at(0s));
  EXPECT_EQ(heard.targets(), HeardDemand::kMaxTargets);
  heard.hear("one-more", "replica-0", interactive(1), at(0s));
  EXPECT_EQ(heard.targets(), 1u) << "full: started afresh (client-named deployments)";
  heard.forget("one-more");
  EXPECT_EQ(heard.targets(), 0u);
}

}  // namespace heard_demand_test
}  // namespace smartlb::redis
