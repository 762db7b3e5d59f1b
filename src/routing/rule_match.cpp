#include "smartlb/routing/rule_match.hpp"

#include <algorithm>

namespace smartlb::routing {

bool RuleConditions::matches(const RequestFacts& facts) const {
  if (!models.empty() && std::find(models.begin(), models.end(), facts.model) == models.end()) return false;
  if (!subjects.empty() && std::none_of(subjects.begin(), subjects.end(), [&](const std::string& s) {
        return std::find(facts.subjects.begin(), facts.subjects.end(), s) != facts.subjects.end();
      }))
    return false;
  for (const auto& [key, value] : metadata) {
    const bool found = std::any_of(facts.metadata.begin(), facts.metadata.end(), [&](const MetadataPair& m) {
      return m.first == key && m.second == value;
    });
    if (!found) return false;
  }
  return true;
}

RuleIndex::RuleIndex(std::span<const RuleConditions> rules) {
  for (std::uint32_t i = 0; i < rules.size(); ++i) {
    if (rules[i].models.empty()) {
      any_model_.push_back(i);
      continue;
    }
    for (const std::string& m : rules[i].models) {
      auto& list = by_model_[m];
      if (list.empty() || list.back() != i) list.push_back(i);  // a model listed twice: once
    }
  }
}

}  // namespace smartlb::routing
