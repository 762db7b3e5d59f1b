// The smartlb executable as users run it: flags, refusing a bad configuration, and a clean
// exit on SIGTERM.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "http_client.hpp"
#include "mock_backend.hpp"

extern char** environ;

namespace smartlb::testing {
namespace {

// A child process with its stdout+stderr captured through a pipe.
class Child {
 public:
  Child(std::vector<std::string> args, std::vector<std::string> env) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> argv, envp;
    args.insert(args.begin(), SMARTLB_BINARY);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    if (posix_spawn(&pid_, SMARTLB_BINARY, &actions, nullptr, argv.data(), envp.data()) != 0)
      throw std::runtime_error("spawn failed");
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_fd_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
  }
  // Reads output until `needle` shows up or the output ends (bounded: 30 s).
  std::string read_until(const std::string& needle) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    char buf[4096];
    while (output_.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 1000) <= 0) continue;
      const ssize_t n = ::read(out_fd_, buf, sizeof buf);
      if (n <= 0) break;
      output_.append(buf, static_cast<std::size_t>(n));
    }
    return output_;
  }
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    read_until(std::string("\0end\0", 5));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void signal(int sig) { kill(pid_, sig); }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
};

TEST(Binary, HelpAndVersion) {
  Child help({"--help"}, {});
  EXPECT_EQ(help.wait_exit(), 0);
  EXPECT_NE(help.output().find("BACKEND_X_URL"), std::string::npos);
  Child version({"--version"}, {});
  EXPECT_EQ(version.wait_exit(), 0);
  EXPECT_EQ(version.output().rfind("smartlb ", 0), 0u);
}

TEST(Binary, BadConfigurationRefusesToStartNamingEveryVariableWithoutTheKey) {
  Child c({}, {"BACKEND_1_URL=not-a-url", "BACKEND_1_APIKEY=sk-very-secret-value ",
               "BACKEND_2_URL=https://ok.example.com", "BACKEND_2_WEIGHT=-3", "PORT=http"});
  EXPECT_EQ(c.wait_exit(), 2);
  const std::string& out = c.output();
  for (const char* var : {"BACKEND_1_URL", "BACKEND_1_APIKEY", "BACKEND_2_WEIGHT", "PORT"})
    EXPECT_NE(out.find(var), std::string::npos) << var << " in:\n" << out;
  EXPECT_EQ(out.find("very-secret"), std::string::npos) << "the key is never echoed:\n" << out;
}

TEST(Binary, UnknownFlagIsRefused) {
  Child c({"--frobnicate"}, {});
  EXPECT_EQ(c.wait_exit(), 2);
}

TEST(Binary, ServesThenDrainsAndExitsZeroOnSigterm) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  Child c({}, {"BACKEND_1_URL=" + backend.url(), "BACKEND_1_APIKEY=sk-secret-in-config",
               "PORT=0", "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1", "THREADS=1"});
  const std::string started = c.read_until(" backend(s)");
  const auto at = started.find("listening on 127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << started;
  const int port = std::stoi(started.substr(at + std::string("listening on 127.0.0.1:").size()));
  auto r = http_call(static_cast<std::uint16_t>(port), "POST", "/v1/chat/completions", {}, "{}");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer sk-secret-in-config");
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait_exit(), 0);
  EXPECT_NE(c.output().find("draining"), std::string::npos);
  EXPECT_EQ(c.output().find("sk-secret-in-config"), std::string::npos) << "no key in the log:\n" << c.output();
}

}  // namespace
}  // namespace smartlb::testing
