#include "smartlb/config/check_report.hpp"

#include "smartlb/config/config_file.hpp"

namespace smartlb {

CheckReport check_report(const ConfigLoadResult& loaded) {
  CheckReport report;
  for (const auto& w : loaded.warnings) report.err += "warning: " + w + "\n";
  if (!loaded.config) {
    report.err += "smartlb: the configuration has " + std::to_string(loaded.errors.size()) + " error(s):\n";
    for (const auto& e : loaded.errors) report.err += "  - " + e + "\n";
    report.exit_code = 1;
    return report;
  }
  report.out = describe_routing(*loaded.config);
  return report;
}

}  // namespace smartlb
