#pragma once
// Which priority class a request belongs to (docs/client-budgets.md, "Priority classes"): the
// classes are ordered, highest first; a caller is in the first class that names its client
// entry or one of its subjects, else in the first class; a request may put itself in a lower
// class than its caller's (the x-smartlb-priority header), never in a higher one. A lower class's
// requests leave at each target what the classes above ask for there, at most the class's
// `reserve_permille` of a limit (routing/class_reserve.hpp), and may wait for capacity
// (clients/capacity_wait.hpp). Plain data in, a class out.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/config/config.hpp"

namespace smartlb::clients {

class PriorityClasses {
 public:
  // interactive, then batch.
  PriorityClasses();
  // `classes` valid (config checks them): 1 to kMaxPriorityClasses, names unique, the first
  // without a reserve. Empty: the defaults (default_priority_classes).
  explicit PriorityClasses(std::vector<config::PriorityClassConfig> classes);

  struct Class {
    std::size_t level = 0;  // 0: the first (highest) class
    std::string_view name;  // a view into this object
    std::uint16_t reserve_permille = 0;
    std::chrono::milliseconds max_queue{0};  // its bounded wait for capacity (0: none)
    std::uint32_t max_queue_length = 0;
  };
  // The class of a caller (its client entry's name and its subjects), lowered to `requested`
  // (a class name, or "": none) when that one is lower. nullopt when `requested` names no class.
  std::optional<Class> resolve(std::string_view client, std::span<const std::string> subjects,
                               std::string_view requested) const;
  const std::vector<config::PriorityClassConfig>& classes() const { return classes_; }
  // The names, for an error message: "interactive, batch".
  std::string names() const;

 private:
  Class at(std::size_t level) const {
    const config::PriorityClassConfig& c = classes_[level];
    return {level, c.name, c.reserve_permille, c.max_queue, c.max_queue_length};
  }
  std::vector<config::PriorityClassConfig> classes_;
};

}  // namespace smartlb::clients
