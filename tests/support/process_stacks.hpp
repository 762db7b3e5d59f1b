#pragma once
// Every thread's stack of a process, printed to stderr by gdb attached to it: what a test that
// hangs (test_main.cpp's watchdog) or a child that does not exit (ChildProcess::wait_exit)
// leaves for whoever reads the log. Best effort: without gdb, or where ptrace is not allowed,
// nothing is printed.
#include <sys/prctl.h>
#include <sys/types.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace smartlb::testing {

inline void print_stacks_of(pid_t pid) {
  if (std::system("command -v gdb > /dev/null 2>&1") != 0) return;
  // Yama's ptrace_scope 1 lets a process trace only its descendants: gdb is this process's
  // child, not its parent, so allow it explicitly (a child process of ours is fine as it is).
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  std::fprintf(stderr, "--- the threads of process %d:\n", static_cast<int>(pid));
  std::fflush(stderr);
  const std::string command =
      "gdb -p " + std::to_string(pid) + " -batch -nx -ex 'thread apply all bt 30' 1>&2 2> /dev/null";
  [[maybe_unused]] const int rc = std::system(command.c_str());
}

}  // namespace smartlb::testing
