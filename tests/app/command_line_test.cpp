#include "smartlb/app/command_line.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace smartlb {
namespace command_line_test {  // named, not anonymous: tests/CMakeLists.txt

app::CommandLine parse(std::vector<const char*> args) {
  args.insert(args.begin(), "smartlb");
  return app::parse_command_line(static_cast<int>(args.size()), args.data());
}

TEST(CommandLine, TakesTheConfigFileEitherWay) {
  const auto spaced = parse({"--config", "a.yaml", "--check-config"});
  EXPECT_TRUE(spaced.error.empty()) << spaced.error;
  EXPECT_EQ(spaced.config_file, "a.yaml");
  EXPECT_TRUE(spaced.check_only);
  const auto joined = parse({"--check-config", "--config=/etc/smartlb/b.yaml"});
  EXPECT_TRUE(joined.error.empty()) << joined.error;
  EXPECT_EQ(joined.config_file, "/etc/smartlb/b.yaml");
  EXPECT_TRUE(joined.check_only);
}

TEST(CommandLine, NoArgumentsRunTheDaemonWithoutAFile) {
  const auto c = parse({});
  EXPECT_TRUE(c.error.empty());
  EXPECT_FALSE(c.config_file);
  EXPECT_FALSE(c.check_only || c.help || c.version);
}

TEST(CommandLine, AConfigWithoutAFileNameIsAnError) {
  for (const auto& args : {std::vector<const char*>{"--config"}, std::vector<const char*>{"--config="}}) {
    const auto c = parse(args);
    EXPECT_EQ(c.error, "--config needs a file name (--config FILE or --config=FILE)") << args[0];
  }
}

TEST(CommandLine, AnUnknownArgumentIsNamed) {
  EXPECT_EQ(parse({"--config-file", "x"}).error, "unknown argument '--config-file' (try --help)");
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_TRUE(parse({"--help-env"}).help_env);
  EXPECT_TRUE(parse({"--version"}).version);
}

}  // namespace command_line_test
}  // namespace smartlb
