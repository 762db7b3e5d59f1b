#include "smartlb/app/command_line.hpp"

#include <string_view>

namespace smartlb::app {

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine c;
  constexpr std::string_view kConfigEquals = "--config=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--config" || arg.starts_with(kConfigEquals)) {
      std::string_view file;
      if (arg != "--config")
        file = arg.substr(kConfigEquals.size());
      else if (i + 1 < argc)
        file = argv[++i];
      if (file.empty()) {
        c.error = "--config needs a file name (--config FILE or --config=FILE)";
        return c;
      }
      c.config_file = std::string(file);
    } else if (arg == "--check-config") {
      c.check_only = true;
    } else if (arg == "--help" || arg == "-h") {
      c.help = true;
    } else if (arg == "--help-env") {
      c.help_env = true;
    } else if (arg == "--version") {
      c.version = true;
    } else {
      c.error = "unknown argument '" + std::string(arg) + "' (try --help)";
      return c;
    }
  }
  return c;
}

}  // namespace smartlb::app
