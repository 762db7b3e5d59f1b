#pragma once
// Runs `promtool check metrics` on a scraped text. promtool is required (Debian package
// `prometheus`): when it is missing the check fails with a clear message, never skips.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace smartlb::test {

inline std::string find_promtool() {
  if (const char* env = std::getenv("PROMTOOL"); env && *env) return env;
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const std::string p = std::string(dir) + "/promtool";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

struct PromtoolResult {
  bool ran = false;
  int exit_code = -1;
  std::string output;
};

inline PromtoolResult promtool_check_metrics(const std::string& text) {
  PromtoolResult r;
  const std::string tool = find_promtool();
  if (tool.empty()) {
    r.output =
        "promtool not found: install the Debian package `prometheus` (apt-get install prometheus) "
        "or set PROMTOOL=/path/to/promtool";
    return r;
  }
  const auto dir = std::filesystem::temp_directory_path();
  const auto in = dir / ("smartlb-metrics-" + std::to_string(::getpid()) + ".txt");
  const auto out = dir / ("smartlb-promtool-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(in, std::ios::binary) << text;
  const std::string cmd =
      "'" + tool + "' check metrics < '" + in.string() + "' > '" + out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  r.ran = true;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(out);
  r.output.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  return r;
}

}  // namespace smartlb::test
