#include "smartlb/config/rule_types.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace rule_types_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(RuleTypes, EveryTypeHasOneNameThatReadsBack) {
  for (const config::RuleType type :
       {config::RuleType::Priority, config::RuleType::Weight, config::RuleType::Latency}) {
    const config::RuleTypeInfo& info = rule_type_info(type);
    EXPECT_EQ(info.type, type);
    EXPECT_EQ(config::rule_type_named(info.name), type) << info.name;
    EXPECT_NE(config::rule_type_names().find(info.name), std::string::npos) << info.name;
  }
  EXPECT_EQ(config::rule_types().size(), 3u);
  EXPECT_EQ(config::rule_type_named("round-robin"), std::nullopt);
  EXPECT_EQ(config::rule_type_names(),
            "weight-based-routing, latency-based-routing or priority-based-routing");
}

TEST(RuleTypes, EachTypeReadsTheTargetSettingsItRoutesBy) {
  EXPECT_TRUE(rule_type_info(config::RuleType::Priority).reads_priority);
  EXPECT_TRUE(rule_type_info(config::RuleType::Priority).reads_weight);  // inside a priority group
  EXPECT_FALSE(rule_type_info(config::RuleType::Weight).reads_priority);
  EXPECT_TRUE(rule_type_info(config::RuleType::Weight).reads_weight);
  EXPECT_FALSE(rule_type_info(config::RuleType::Latency).reads_weight);
  EXPECT_TRUE(rule_type_info(config::RuleType::Latency).reads_latency);
}

}  // namespace rule_types_test
}  // namespace smartlb
