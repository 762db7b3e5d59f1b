#pragma once
// What a reload reads but cannot apply: settings taken at start only. A reload that changes one
// is still applied (its routing is), and says which settings wait for a restart.
#include <string>
#include <vector>

#include "smartlb/config/config.hpp"

namespace smartlb::app {

// One line for each start-only setting that `loaded` changes from `running` (the configuration
// the process started with), naming the setting; never a password.
std::vector<std::string> settings_needing_restart(const config::Config& running,
                                                  const config::Config& loaded);

}  // namespace smartlb::app
