// The source tree's rule that namespace = module: src/M/ and include/smartlb/M/ declare only
// smartlb::M (and namespaces inside it), so a name's module is in its qualification; and no
// header carries a using-directive, which would leak one module's names into every includer.
// A block of forward declarations only (`class Tracer;`) may name another module's namespace:
// that is how a header names a type of a module it depends on privately.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace module_namespaces_test {  // named, not anonymous: tests/CMakeLists.txt

namespace fs = std::filesystem;

struct SourceFile {
  fs::path path;
  std::string module;  // M of src/M/… or include/smartlb/M/…
  bool header = false;
};

std::vector<SourceFile> module_sources() {
  const fs::path root = SMARTLB_SOURCE_DIR;
  std::vector<SourceFile> files;
  for (const fs::path& base : {root / "src", root / "include" / "smartlb"}) {
    for (const auto& entry : fs::recursive_directory_iterator(base)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      const auto rel = fs::relative(entry.path(), base);
      if (rel.begin() == rel.end() || std::next(rel.begin()) == rel.end()) continue;  // top-level
      files.push_back({entry.path(), rel.begin()->string(), ext == ".hpp"});
    }
  }
  return files;
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether the namespace block opened at lines[open] holds nothing but forward declarations.
bool only_forward_declarations(const std::vector<std::string>& lines, std::size_t open) {
  static const std::regex declaration(R"(^\s*(class|struct)\s+\w+;\s*(//.*)?$)");
  static const std::regex filler(R"(^\s*(//.*)?$)");
  for (std::size_t i = open + 1; i < lines.size(); ++i) {
    if (lines[i].rfind('}', 0) == 0) return true;
    if (!std::regex_match(lines[i], declaration) && !std::regex_match(lines[i], filler)) return false;
  }
  return false;
}

std::string location(const SourceFile& file, std::size_t index) {
  return fs::relative(file.path, SMARTLB_SOURCE_DIR).string() + ":" + std::to_string(index + 1);
}

TEST(ModuleLayout, EveryModuleDeclaresOnlyItsOwnNamespace) {
  static const std::regex opening(R"(^\s*namespace\s+(smartlb(::\w+)*)\s*\{)");
  std::ostringstream wrong;
  std::size_t checked = 0;
  for (const auto& file : module_sources()) {
    const auto lines = lines_of(file.path);
    const std::string own = "smartlb::" + file.module;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::smatch match;
      if (!std::regex_search(lines[i], match, opening)) continue;
      ++checked;
      const std::string name = match[1].str();
      if (name == own || name.rfind(own + "::", 0) == 0) continue;
      if (only_forward_declarations(lines, i)) continue;
      wrong << location(file, i) << " declares " << name << ", not " << own << "\n";
    }
  }
  EXPECT_GT(checked, 300u) << "found too few namespace blocks: is SMARTLB_SOURCE_DIR right?";
  EXPECT_EQ(wrong.str(), "");
}

TEST(ModuleLayout, NoHeaderCarriesAUsingDirective) {
  // std's literal namespaces are the one exception: they only add suffixes like 10ms.
  static const std::regex directive(R"(^\s*using\s+namespace\s+(?!std::(\w+_)?literals))");
  std::ostringstream wrong;
  std::size_t headers = 0;
  for (const auto& file : module_sources()) {
    if (!file.header) continue;
    ++headers;
    const auto lines = lines_of(file.path);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (std::regex_search(lines[i], directive)) wrong << location(file, i) << ": " << lines[i] << "\n";
    }
  }
  EXPECT_GT(headers, 200u);
  EXPECT_EQ(wrong.str(), "");
}

}  // namespace module_namespaces_test
