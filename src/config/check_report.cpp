#include "smartlb/config/check_report.hpp"

#include <cstring>

#include "smartlb/config/config_file.hpp"

namespace smartlb::config {
namespace {

// Text is printed up to its first NUL byte, which the file's text can hold (a key, a rule's
// id): a NUL is never printed, and a message with one ends there, as printf's %s ends it.
std::string up_to_nul(const std::string& text) {
  return std::string(text.c_str(), std::strlen(text.c_str()));
}

}  // namespace

CheckReport check_report(const ConfigLoadResult& loaded) {
  CheckReport report;
  for (const auto& w : loaded.warnings) report.err += "warning: " + up_to_nul(w) + "\n";
  if (!loaded.config) {
    report.err += "smartlb: the configuration has " + std::to_string(loaded.errors.size()) + " error(s):\n";
    for (const auto& e : loaded.errors) report.err += "  - " + up_to_nul(e) + "\n";
    report.exit_code = 1;
    return report;
  }
  report.out = up_to_nul(describe_routing(*loaded.config));
  return report;
}

}  // namespace smartlb::config
