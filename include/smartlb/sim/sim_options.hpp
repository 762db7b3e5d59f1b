#pragma once
// Command line of smartlb-sim.

#include "smartlb/sim/sim_settings.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace smartlb::sim {

struct SimOptions {
  std::string listen = "127.0.0.1";
  std::uint16_t port = 0;  // 0 = ephemeral
  int threads = 1;
  std::string log_level = "info";
  std::size_t max_body_bytes = 32 * 1024 * 1024;
  SimSettings settings;
};

struct SimOptionsParse {
  SimOptions options;
  bool show_help = false;
  std::string error;  // non-empty: bad command line
};

/// Parses arguments (without argv[0]). Accepts "--flag value" and "--flag=value".
SimOptionsParse parse_sim_options(const std::vector<std::string>& args);

std::string sim_usage();

}  // namespace smartlb::sim
