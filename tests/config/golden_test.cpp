// Golden tests of the configuration: each tests/config/golden/NAME.yaml is loaded with the
// environment of NAME.env beside it (KEY=VALUE lines, # comments; none of the process's own
// environment), and what `smartlb --check-config` prints for it is compared with the expected
// file beside it, byte for byte:
//   NAME.summary  a valid configuration: its warnings ("warning: ..."), then the summary;
//   NAME.errors   an invalid one: its warnings, then "smartlb: the configuration has N error(s):"
//                 and every error.
// Messages name the file as NAME.yaml. A new case is a new NAME.yaml: the folder is read, there
// is no list to keep. NAME.yaml may be a symbolic link (example.yaml is
// config/smartlb.example.yaml, truefoundry.yaml tests/config/truefoundry_loadbalancing.yaml).
//
// To write the expected files from what smartlb prints now (for a new case, or after changing a
// message on purpose):
//   UPDATE_GOLDEN=1 build-test/tests/smartlb_unit_tests --gtest_filter='ConfigGolden*'
// then read `git diff tests/config/golden` before committing it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "smartlb/config/check_report.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb {
namespace golden_test {  // named, not anonymous: tests/CMakeLists.txt

namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(SMARTLB_SOURCE_DIR) / "tests" / "config" / "golden";

bool updating() {
  const char* v = std::getenv("UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// NAME.env: KEY=VALUE per line (the value is the rest of the line, as it is); blank lines and
// lines starting with # are skipped.
config::EnvMap read_env(const fs::path& path) {
  config::EnvMap env;
  std::istringstream lines(read_text(path).value_or(""));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) {
      ADD_FAILURE() << path.filename() << ": not KEY=VALUE: " << line;
      continue;
    }
    env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// The cases: every NAME.yaml of the folder, in name order.
std::vector<std::string> golden_cases() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kGoldenDir, ec))
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class ConfigGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ConfigGolden, PrintsWhatTheExpectedFileHolds) {
  const std::string name = GetParam();
  const auto text = read_text(kGoldenDir / (name + ".yaml"));
  ASSERT_TRUE(text) << "cannot read " << name << ".yaml";
  const config::EnvMap env =
      fs::exists(kGoldenDir / (name + ".env")) ? read_env(kGoldenDir / (name + ".env")) : config::EnvMap{};
  const config::CheckReport report = check_report(config::load_config_text(env, *text, name + ".yaml"));
  const std::string printed = report.err + report.out;

  const bool valid = report.exit_code == 0;
  const fs::path expected_path = kGoldenDir / (name + (valid ? ".summary" : ".errors"));
  const fs::path other_path = kGoldenDir / (name + (valid ? ".errors" : ".summary"));
  if (updating()) {
    std::ofstream(expected_path, std::ios::binary | std::ios::trunc) << printed;
    fs::remove(other_path);
    return;
  }
  EXPECT_FALSE(fs::exists(other_path)) << name << ".yaml is " << (valid ? "valid" : "invalid") << " but "
                                       << other_path.filename() << " expects otherwise";
  const auto expected = read_text(expected_path);
  ASSERT_TRUE(expected) << "no " << expected_path.filename() << " (UPDATE_GOLDEN=1 writes it); " << name
                        << ".yaml prints:\n"
                        << printed;
  EXPECT_EQ(printed, *expected) << name << ".yaml (UPDATE_GOLDEN=1 rewrites the expected file)";
}

INSTANTIATE_TEST_SUITE_P(Files, ConfigGolden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id = info.param;
                           for (char& c : id)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return id;
                         });

// Every file of the folder belongs to a case, so that a renamed case leaves no stale expectation.
TEST(ConfigGoldenFolder, EveryFileBelongsToACase) {
  const std::vector<std::string> cases = golden_cases();
  EXPECT_GE(cases.size(), 12u) << "the golden folder " << kGoldenDir << " is missing or nearly empty";
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    const fs::path& p = entry.path();
    const std::string ext = p.extension().string();
    EXPECT_TRUE(ext == ".yaml" || ext == ".env" || ext == ".summary" || ext == ".errors")
        << p.filename() << ": not a case's .yaml, .env, .summary or .errors";
    EXPECT_TRUE(std::binary_search(cases.begin(), cases.end(), p.stem().string()))
        << p.filename() << " has no " << p.stem().string() << ".yaml";
  }
}

}  // namespace golden_test
}  // namespace smartlb
