#pragma once
// Waits for a condition another thread makes true (a replica learning a cooldown, Redis coming
// back): polled every millisecond, bounded by 30 s so a bug fails the test instead of hanging
// it. True when the condition held.
#include <chrono>
#include <thread>

namespace smartlb::testing {

template <class Predicate>
bool await_condition(Predicate holds, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!holds()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace smartlb::testing
