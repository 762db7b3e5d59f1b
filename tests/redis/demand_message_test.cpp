// A replica's priority-class demand as it travels: what comes from Redis is checked member by
// member, and what one replica writes another reads the same.
#include "smartlb/redis/demand_message.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace demand_message_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(DemandMessage, WhatOtherReplicasSendIsCheckedMemberByMember) {
  EXPECT_FALSE(redis::decode_demand("not json"));
  EXPECT_FALSE(redis::decode_demand(R"({"r":"x","t":[{"b":"a","d":"gpt","l":[[1,-1]]}]})")) << "negative";
  EXPECT_FALSE(redis::decode_demand(R"({"r":"x","t":[{"b":"a","d":"gpt","l":[[1]]}]})")) << "not a pair";
  EXPECT_FALSE(redis::decode_demand(R"({"r":"x","t":[{"b":"a","l":[]}]})")) << "no deployment";
  EXPECT_FALSE(redis::decode_demand(R"({"r":"x","t":[{"b":"a","d":"gpt","l":[[0,0],[0,0],[0,0],[0,0],)"
                                    R"([0,0],[0,0],[0,0],[0,0],[0,0]]}]})"))
      << "more levels than there are";
  std::string many = R"({"r":"x","t":[)";
  for (std::size_t i = 0; i <= redis::kMaxDemandTargets; ++i)
    many += std::string(i ? "," : "") + R"({"b":"a","d":"gpt","l":[]})";
  EXPECT_FALSE(redis::decode_demand(many + "]}")) << "more targets than a replica sends";
  redis::DemandMessage m{"replica-1", {{"a", "gpt", {}}}};
  m.targets[0].rates[0] = {250, 2.5};
  m.targets[0].rates[2] = {10, 0.5};
  const auto back = redis::decode_demand(redis::encode(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->replica, "replica-1");
  ASSERT_EQ(back->targets.size(), 1u);
  EXPECT_EQ(back->targets[0].deployment, "gpt");
  EXPECT_EQ(back->targets[0].rates[0].tokens_per_second, 250);
  EXPECT_EQ(back->targets[0].rates[1].requests_per_second, 0);
  EXPECT_EQ(back->targets[0].rates[2].requests_per_second, 0.5);
}

}  // namespace demand_message_test
}  // namespace smartlb
