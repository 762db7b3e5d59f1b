#include "smartlb/routing/rule_match.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace rule_match_test {  // named, not anonymous: tests/CMakeLists.txt

struct Facts {
  std::vector<std::string> subjects;
  std::string model;
  std::vector<routing::MetadataPair> metadata;
  routing::RequestFacts view() const { return {subjects, model, metadata}; }
};

TEST(RuleMatch, NoConditionsMatchesEveryRequest) {
  routing::RuleConditions c;
  EXPECT_TRUE(c.empty());
  EXPECT_TRUE(c.matches(Facts{}.view()));
  EXPECT_TRUE(c.matches(Facts{{"team:x"}, "gpt-4o", {{"env", "dev"}}}.view()));
}

TEST(RuleMatch, AnyListedModelMatches) {
  routing::RuleConditions c{{}, {"gpt-4o", "gpt-4o-mini"}, {}};
  EXPECT_TRUE(c.matches(Facts{{}, "gpt-4o-mini", {}}.view()));
  EXPECT_FALSE(c.matches(Facts{{}, "gpt-4", {}}.view()));
  EXPECT_FALSE(c.matches(Facts{{}, "", {}}.view())) << "a request without a model";
}

TEST(RuleMatch, AnyListedSubjectOfTheClientMatches) {
  routing::RuleConditions c{{"team:search", "user:bob"}, {}, {}};
  EXPECT_TRUE(c.matches(Facts{{"user:alice", "team:search"}, "m", {}}.view()));
  EXPECT_FALSE(c.matches(Facts{{"user:alice"}, "m", {}}.view()));
  EXPECT_FALSE(c.matches(Facts{{}, "m", {}}.view())) << "an anonymous client carries no subject";
}

TEST(RuleMatch, EveryMetadataPairMustBeThereExactly) {
  routing::RuleConditions c{{}, {}, {{"env", "dev"}, {"customer-id", "c1"}}};
  EXPECT_TRUE(c.matches(Facts{{}, "m", {{"customer-id", "c1"}, {"env", "dev"}, {"x", "y"}}}.view()));
  EXPECT_FALSE(c.matches(Facts{{}, "m", {{"env", "dev"}}}.view()));
  EXPECT_FALSE(c.matches(Facts{{}, "m", {{"env", "Dev"}, {"customer-id", "c1"}}}.view()));
}

TEST(RuleMatch, AllConditionKindsMustHoldTogether) {
  routing::RuleConditions c{{"team:search"}, {"gpt-4o"}, {{"env", "dev"}}};
  EXPECT_TRUE(c.matches(Facts{{"team:search"}, "gpt-4o", {{"env", "dev"}}}.view()));
  EXPECT_FALSE(c.matches(Facts{{"team:search"}, "gpt-4o", {{"env", "prod"}}}.view()));
  EXPECT_FALSE(c.matches(Facts{{"team:other"}, "gpt-4o", {{"env", "dev"}}}.view()));
  EXPECT_FALSE(c.matches(Facts{{"team:search"}, "gpt-4", {{"env", "dev"}}}.view()));
}

std::vector<std::int64_t> candidates(const routing::RuleIndex& index, std::string_view model) {
  std::vector<std::int64_t> out;
  index.find(model, [&](std::uint32_t i) {
    out.push_back(i);
    return false;
  });
  return out;
}

TEST(RuleIndex, CandidatesAreTheRulesOfTheModelAndThoseWithoutModelsInOrder) {
  const std::vector<routing::RuleConditions> rules = {
      {{}, {"gpt-4o"}, {}},                 // 0
      {{"team:x"}, {}, {}},                 // 1: any model
      {{}, {"gpt-4o-mini", "gpt-4o"}, {}},  // 2
      {{}, {"gpt-4o-mini"}, {}},            // 3
      {{}, {}, {}},                         // 4: the default
  };
  const routing::RuleIndex index(rules);
  EXPECT_EQ(candidates(index, "gpt-4o"), (std::vector<std::int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(candidates(index, "gpt-4o-mini"), (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(candidates(index, "other"), (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(candidates(index, ""), (std::vector<std::int64_t>{1, 4}));
}

TEST(RuleIndex, FindStopsAtTheFirstAccepted) {
  const std::vector<routing::RuleConditions> rules = {{{}, {"m"}, {}}, {{}, {}, {}}, {{}, {"m"}, {}}};
  const routing::RuleIndex index(rules);
  int calls = 0;
  EXPECT_EQ(index.find("m",
                       [&](std::uint32_t i) {
                         ++calls;
                         return i == 1;
                       }),
            1);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(routing::RuleIndex().find("m", [](std::uint32_t) { return true; }), -1);
}

}  // namespace rule_match_test
}  // namespace smartlb
