#include "smartlb/clients/priority_classes.hpp"

#include <algorithm>

namespace smartlb::clients {

PriorityClasses::PriorityClasses() : classes_(config::default_priority_classes()) {}

PriorityClasses::PriorityClasses(std::vector<config::PriorityClassConfig> classes)
    : classes_(classes.empty() ? config::default_priority_classes() : std::move(classes)) {}

std::optional<PriorityClasses::Class> PriorityClasses::resolve(std::string_view client,
                                                               std::span<const std::string> subjects,
                                                               std::string_view requested) const {
  std::size_t level = 0;
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const config::PriorityClassConfig& c = classes_[i];
    const bool named = std::find(c.clients.begin(), c.clients.end(), client) != c.clients.end();
    const bool carried = std::any_of(c.subjects.begin(), c.subjects.end(), [&](const std::string& s) {
      return std::find(subjects.begin(), subjects.end(), s) != subjects.end();
    });
    if (named || carried) {
      level = i;
      break;
    }
  }
  if (requested.empty()) return at(level);
  for (std::size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i].name == requested) return at(std::max(i, level));  // lower, never higher
  return std::nullopt;
}

std::string PriorityClasses::names() const {
  std::string out;
  for (const config::PriorityClassConfig& c : classes_) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

}  // namespace smartlb::clients
