#include "smartlb/config/config.hpp"

#include <algorithm>

namespace smartlb::config {

bool TargetConfig::serves(std::string_view model) const {
  if (model.empty()) return false;
  if (model == id || (!upstream_name.empty() && model == upstream_name)) return true;
  if (const auto slash = id.rfind('/');
      slash != std::string::npos && model == std::string_view(id).substr(slash + 1))
    return true;
  return std::find(aliases.begin(), aliases.end(), model) != aliases.end();
}

}  // namespace smartlb::config
