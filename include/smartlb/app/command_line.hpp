#pragma once
// smartlb's command line: what to do, and with which config file. Pure, so that a test holds it.
#include <optional>
#include <string>

namespace smartlb::app {

struct CommandLine {
  std::optional<std::string> config_file;  // --config FILE or --config=FILE
  bool check_only = false;                 // --check-config
  bool help = false;                       // --help, -h
  bool help_env = false;                   // --help-env: every environment variable
  bool version = false;                    // --version
  std::string error;                       // not empty: the arguments are wrong, and this says why
};

CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace smartlb::app
