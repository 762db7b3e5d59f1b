#include "smartlb/config/rule_types.hpp"

#include <iterator>

namespace smartlb::config {
namespace {

constexpr RuleTypeInfo kRuleTypes[] = {
    {RuleType::Weight, "weight-based-routing", true, false, false},
    {RuleType::Latency, "latency-based-routing", false, false, true},
    {RuleType::Priority, "priority-based-routing", true, true, false},
};

}  // namespace

std::span<const RuleTypeInfo> rule_types() { return kRuleTypes; }

const RuleTypeInfo& rule_type_info(RuleType type) {
  for (const RuleTypeInfo& t : kRuleTypes)
    if (t.type == type) return t;
  return kRuleTypes[2];  // unreachable: every RuleType is in the table
}

std::optional<RuleType> rule_type_named(std::string_view name) {
  for (const RuleTypeInfo& t : kRuleTypes)
    if (t.name == name) return t.type;
  return std::nullopt;
}

const std::string& rule_type_names() {
  static const std::string names = [] {
    std::string out;
    for (std::size_t i = 0; i < std::size(kRuleTypes); ++i) {
      if (i > 0) out += i + 1 == std::size(kRuleTypes) ? " or " : ", ";
      out += kRuleTypes[i].name;
    }
    return out;
  }();
  return names;
}

}  // namespace smartlb::config
