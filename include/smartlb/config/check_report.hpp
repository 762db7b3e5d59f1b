#pragma once
// What `smartlb --check-config` prints: the warnings, then every error (exit 1) or the summary
// of the routing (exit 0). One function, so that the golden tests (tests/config/golden/) hold
// exactly what the binary prints.
#include <string>

#include "smartlb/config/config_env.hpp"

namespace smartlb::config {

struct CheckReport {
  std::string out;    // standard output: the summary of a valid configuration (describe_routing)
  std::string err;    // standard error: "warning: ..." lines, then an invalid one's errors
  int exit_code = 0;  // 0: valid, 1: invalid
};

CheckReport check_report(const ConfigLoadResult& loaded);

}  // namespace smartlb::config
