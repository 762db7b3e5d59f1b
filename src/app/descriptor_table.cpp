#include "smartlb/app/descriptor_table.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <string>

namespace smartlb::app {

std::size_t raise_descriptor_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  return rl.rlim_cur == RLIM_INFINITY ? static_cast<std::size_t>(-1) : static_cast<std::size_t>(rl.rlim_cur);
}

std::size_t descriptors_to_reserve(std::size_t max_connections, std::size_t limit) {
  constexpr std::size_t kHeadroom = 1024;
  const std::size_t wanted = max_connections > (static_cast<std::size_t>(-1) - kHeadroom) / 2
                                 ? static_cast<std::size_t>(-1)
                                 : 2 * max_connections + kHeadroom;
  return std::min(wanted, limit);
}

bool reserve_descriptor_table(std::size_t count) {
  if (count == 0) return true;
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max())) return false;
  const int source = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (source < 0) return false;
  // F_DUPFD takes the lowest free descriptor at or above its argument: the table grows to hold it.
  const int high = ::fcntl(source, F_DUPFD_CLOEXEC, static_cast<int>(count - 1));
  ::close(source);
  if (high < 0) return false;
  ::close(high);
  return true;
}

std::size_t descriptor_table_size() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("FDSize:", 0) == 0) {
      const char* at = line.c_str() + 7;
      while (*at == ' ' || *at == '\t') ++at;
      std::size_t size = 0;
      std::from_chars(at, line.c_str() + line.size(), size);
      return size;
    }
  return 0;
}

}  // namespace smartlb::app
