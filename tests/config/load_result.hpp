#pragma once
// What the config tests ask of a load's result: whether an error says something, and all of them
// for a failure message.
#include <algorithm>
#include <string>
#include <string_view>

#include "smartlb/config/config_env.hpp"

namespace smartlb {

inline bool has_error(const config::ConfigLoadResult& r, std::string_view needle) {
  return std::any_of(r.errors.begin(), r.errors.end(),
                     [&](const std::string& e) { return e.find(needle) != std::string::npos; });
}

inline std::string all_errors(const config::ConfigLoadResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += e + "\n";
  return s;
}

}  // namespace smartlb
