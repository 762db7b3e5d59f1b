#pragma once
// A child process for tests that run the smartlb executable: started with posix_spawn, its
// stdout and stderr collected through one pipe by a reader thread. Every wait is bounded
// (60 s), so a process that never prints what a test waits for, or never exits, fails the test
// instead of hanging it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "process_stacks.hpp"

extern char** environ;

namespace smartlb::testing {

namespace child_registry {
// The pids of the children alive now: the hang watchdog (test_main.cpp) ends them before it
// aborts the test process, so that none outlives it.
inline std::mutex mutex;
inline std::set<pid_t> pids;
inline void add(pid_t pid) {
  std::lock_guard lock(mutex);
  pids.insert(pid);
}
inline void remove(pid_t pid) {
  std::lock_guard lock(mutex);
  pids.erase(pid);
}
}  // namespace child_registry

inline std::vector<pid_t> live_children() {
  std::lock_guard lock(child_registry::mutex);
  return {child_registry::pids.begin(), child_registry::pids.end()};
}

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
    child_registry::add(pid_);
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
      child_registry::remove(pid_);
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
  // signal that ended it. One that has not exited within the limit has its threads' stacks
  // printed and is killed: -1.
  int wait_exit(std::chrono::seconds limit = kLimit) {
    const bool exited = exits_within(limit);
    if (!exited) {
      std::fprintf(stderr, "child %d has not exited within %lld s: killing it\n", static_cast<int>(pid_),
                   static_cast<long long>(limit.count()));
      print_stacks_of(pid_);
      ::kill(pid_, SIGKILL);
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    child_registry::remove(pid_);
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    if (!exited) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string output() const {
    std::lock_guard lock(mutex_);
    return output_;
  }

 private:
  static constexpr std::chrono::seconds kLimit{60};

  // Whether the process has exited (or exits) within `limit`, without reaping it: its pidfd
  // becomes readable when it does. Without pidfds (Linux < 5.3), true: wait_exit then blocks.
  bool exits_within(std::chrono::milliseconds limit) const {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd < 0) return true;
    pollfd p{pidfd, POLLIN, 0};
    int n;
    do n = ::poll(&p, 1, static_cast<int>(limit.count()));
    while (n < 0 && errno == EINTR);
    ::close(pidfd);
    return n > 0;
  }

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
