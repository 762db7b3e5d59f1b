#pragma once
// A child process for tests that run the smartlb executable: started with posix_spawn, its
// stdout and stderr collected through one pipe by a reader thread. Every wait is bounded
// (60 s), so a process that never prints what a test waits for fails the test instead of
// hanging it.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace smartlb::testing {

class ChildProcess {
 public:
  // Runs `binary` (also its argv[0]) with `args` and exactly the environment `env`
  // ("NAME=value" entries; nothing is inherited, see inherited_environment()).
  ChildProcess(const std::string& binary, std::vector<std::string> args, std::vector<std::string> env) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    args.insert(args.begin(), binary);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw std::runtime_error("cannot start " + binary + ": " + std::strerror(rc));
    }
    fd_ = fds[0];
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard lock(mutex_);
        output_.append(buf, static_cast<std::size_t>(n));
        cv_.notify_all();
      }
      std::lock_guard lock(mutex_);
      eof_ = true;
      cv_.notify_all();
    });
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits until `needle` was printed `occurrences` times or the output ended; returns all
  // output so far.
  std::string read_until(const std::string& needle, std::size_t occurrences = 1) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, kLimit, [&] { return count(needle) >= occurrences || eof_; });
    return output_;
  }
  // The first match of `re` in the output (its first group if it has one), awaited; empty if
  // the output ended first.
  std::string await_match(const std::regex& re) {
    std::unique_lock lock(mutex_);
    std::smatch m;
    cv_.wait_for(lock, kLimit, [&] { return std::regex_search(output_, m, re) || eof_; });
    if (!std::regex_search(output_, m, re)) return {};
    return m.size() > 1 ? m[1].str() : m[0].str();
  }
  void signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // Waits for the process to exit and for all of its output; its exit code, or 128 + the
  // signal that ended it.
  int wait_exit() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string output() const {
    std::lock_guard lock(mutex_);
    return output_;
  }

 private:
  static constexpr std::chrono::seconds kLimit{60};

  std::size_t count(const std::string& needle) const {
    std::size_t c = 0;
    for (auto at = output_.find(needle); at != std::string::npos; at = output_.find(needle, at + 1)) ++c;
    return c;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::string output_;
  bool eof_ = false;
};

// This process's environment, without the variables whose names start with `skip_prefix`.
inline std::vector<std::string> inherited_environment(const std::string& skip_prefix) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, skip_prefix.c_str(), skip_prefix.size()) != 0) out.emplace_back(*e);
  return out;
}

}  // namespace smartlb::testing
