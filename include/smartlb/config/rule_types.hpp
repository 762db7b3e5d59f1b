#pragma once
// The routing rule types (TrueFoundry's names), described once: what the file calls each, and
// which of a target's settings it reads. The file reader parses and checks with it, --check-config,
// /status and the status page name types with it; net/snapshot makes each type's selector.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "smartlb/config/config.hpp"

namespace smartlb::config {

struct RuleTypeInfo {
  RuleType type;
  std::string_view name;  // as the file writes it
  bool reads_weight;      // a target's weight shares traffic
  bool reads_priority;    // a target's priority orders groups
  bool reads_latency;     // the rule's `config` (lookback, allowed overhead) and latency statistics
};

std::span<const RuleTypeInfo> rule_types();
const RuleTypeInfo& rule_type_info(RuleType type);
std::optional<RuleType> rule_type_named(std::string_view name);
// "a, b or c": every name, for messages.
const std::string& rule_type_names();

}  // namespace smartlb::config
