// The smartlb-sim executable as scripts use it: the startup line on stdout, exit 0 on SIGTERM.

#include "http_test_client.hpp"

#include <csignal>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

extern char** environ;

namespace smartlb::sim {
namespace sim_binary_test {  // named, not anonymous: tests/CMakeLists.txt

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;  // the child's stdout
};

Child spawn_sim(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<std::string> storage{SMARTLB_SIM_BINARY};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  Child child;
  const int rc = posix_spawn(&child.pid, SMARTLB_SIM_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return {};
  }
  child.out = fdopen(fds[0], "r");
  return child;
}

std::string read_line(FILE* file) {
  char line[512] = {};
  return std::fgets(line, sizeof line, file) ? std::string(line) : std::string();
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SimBinary, PrintsListeningLineServesAndExitsZeroOnSigterm) {
  auto child = spawn_sim({"--port", "0", "--name", "bin", "--log-level", "warn"});
  ASSERT_GT(child.pid, 0);
  const std::string line = read_line(child.out);  // blocks until the sim is listening
  std::smatch match;
  ASSERT_TRUE(std::regex_match(line, match, std::regex(R"(smartlb-sim listening on 127\.0\.0\.1:(\d+)\n)")))
      << line;
  const auto port = static_cast<std::uint16_t>(std::stoi(match[1].str()));
  ASSERT_GT(port, 0);
  {
    test::HttpTestClient client(port);
    const auto result =
        client.request("POST", "/v1/chat/completions", R"({"model":"gpt-4o","messages":[{"content":"hi"}]})");
    EXPECT_EQ(result.status, 200);
    EXPECT_EQ(result.header("x-sim-name"), "bin");
  }
  ASSERT_EQ(kill(child.pid, SIGTERM), 0);
  EXPECT_EQ(wait_exit_code(child.pid), 0);
  EXPECT_EQ(read_line(child.out), "");  // exactly one line on stdout
  std::fclose(child.out);
}

TEST(SimBinary, LimiterAndReportFlagsReachTheEngine) {
  auto child = spawn_sim({"--port", "0", "--log-level", "warn", "--limiter", "sliding", "--window-seconds",
                          "10", "--rpm-interval-seconds", "1", "--report-unknown-rate", "1"});
  ASSERT_GT(child.pid, 0);
  const std::string line = read_line(child.out);
  std::smatch match;
  ASSERT_TRUE(std::regex_match(line, match, std::regex(R"(smartlb-sim listening on 127\.0\.0\.1:(\d+)\n)")))
      << line;
  {
    test::HttpTestClient client(static_cast<std::uint16_t>(std::stoi(match[1].str())));
    const auto answer =
        client.request("POST", "/v1/chat/completions", R"({"model":"gpt-4o","messages":[{"content":"hi"}]})");
    EXPECT_EQ(answer.status, 200);
    EXPECT_EQ(answer.header("x-ratelimit-remaining-tokens"), "-1");
    const auto stats = client.request("GET", "/_sim/stats", "");
    EXPECT_NE(stats.body.find(R"("kind":"sliding")"), std::string::npos) << stats.body;
    EXPECT_NE(stats.body.find(R"("rpm_interval_seconds":1.0)"), std::string::npos) << stats.body;
  }
  ASSERT_EQ(kill(child.pid, SIGTERM), 0);
  EXPECT_EQ(wait_exit_code(child.pid), 0);
  std::fclose(child.out);
}

TEST(SimBinary, ExitsZeroOnSigint) {
  auto child = spawn_sim({});
  ASSERT_GT(child.pid, 0);
  ASSERT_FALSE(read_line(child.out).empty());
  ASSERT_EQ(kill(child.pid, SIGINT), 0);
  EXPECT_EQ(wait_exit_code(child.pid), 0);
  std::fclose(child.out);
}

TEST(SimBinary, HelpExitsZeroAndBadFlagExitsTwo) {
  auto help = spawn_sim({"--help"});
  ASSERT_GT(help.pid, 0);
  EXPECT_NE(read_line(help.out).find("smartlb-sim"), std::string::npos);
  EXPECT_EQ(wait_exit_code(help.pid), 0);
  std::fclose(help.out);

  auto bad = spawn_sim({"--no-such-flag"});
  ASSERT_GT(bad.pid, 0);
  EXPECT_EQ(wait_exit_code(bad.pid), 2);
  std::fclose(bad.out);
}

}  // namespace sim_binary_test
}  // namespace smartlb::sim
