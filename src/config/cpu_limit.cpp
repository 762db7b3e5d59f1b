#include "smartlb/config/cpu_limit.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <limits>
#include <thread>

namespace smartlb::config {

namespace {

constexpr std::string_view kSpace = " \t\r\n";

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  for (;;) {
    const auto begin = text.find_first_not_of(kSpace);
    if (begin == std::string_view::npos) return words;
    text.remove_prefix(begin);
    const auto end = text.find_first_of(kSpace);
    words.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return words;
    text.remove_prefix(end);
  }
}

// A whole decimal number, nothing before or after it.
std::optional<std::int64_t> parse_int(std::string_view word) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return v;
}

std::optional<CpuQuota> make_quota(std::string_view quota, std::string_view period, std::string what) {
  const auto q = parse_int(quota);
  const auto p = parse_int(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return CpuQuota{*q, *p, std::move(what)};
}

// The file's text (the first 64 KiB), or nullopt when it cannot be read.
std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return std::nullopt;
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::string file_in(const std::string& root, const std::string& dir, std::string_view name) {
  return root + (dir == "/" ? std::string{} : dir) + "/" + std::string(name);
}

std::optional<unsigned> affinity_cpus() {
  // A fixed cpu_set_t holds 1024 CPUs and sched_getaffinity fails with EINVAL on bigger
  // machines: grow the set until it fits.
  for (int n = CPU_SETSIZE; n <= (1 << 17); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (!set) return std::nullopt;
    const std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      const int count = CPU_COUNT_S(size, set);
      CPU_FREE(set);
      if (count <= 0) return std::nullopt;
      return static_cast<unsigned>(count);
    }
    const int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<CpuQuota> parse_cgroup_cpu_max(std::string_view text) {
  const auto words = split_words(text);
  if (words.size() != 2 || words[0] == "max") return std::nullopt;
  return make_quota(words[0], words[1], "cgroup cpu.max");
}

std::optional<CpuQuota> parse_cgroup_v1_quota(std::string_view quota_text, std::string_view period_text) {
  const auto quota = split_words(quota_text);
  const auto period = split_words(period_text);
  if (quota.size() != 1 || period.size() != 1) return std::nullopt;
  return make_quota(quota[0], period[0], "cgroup cpu.cfs_quota_us");  // -1: no limit
}

unsigned quota_cpus(const CpuQuota& q) {
  if (q.quota_us <= 0 || q.period_us <= 0) return 1;
  const std::int64_t cpus = q.quota_us / q.period_us + (q.quota_us % q.period_us != 0 ? 1 : 0);
  if (cpus > std::int64_t{std::numeric_limits<unsigned>::max()}) return std::numeric_limits<unsigned>::max();
  return std::max<unsigned>(static_cast<unsigned>(cpus), 1);
}

ProcCgroups parse_proc_self_cgroup(std::string_view text) {
  ProcCgroups out;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // hierarchy-ID:controller-list:path (the path itself may contain ':')
    const auto c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    const auto c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, c1);
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = line.substr(c2 + 1);
    if (path.empty()) continue;
    if (id == "0" && controllers.empty()) {
      if (!out.v2) out.v2 = std::string(path);
      continue;
    }
    while (!out.v1_cpu) {
      const auto comma = controllers.find(',');
      if (controllers.substr(0, comma) == "cpu") out.v1_cpu = std::string(path);
      if (comma == std::string_view::npos) break;
      controllers.remove_prefix(comma + 1);
    }
  }
  return out;
}

std::vector<std::string> cgroup_ancestors(std::string_view path) {
  if (path.empty() || path.front() != '/') return {"/"};
  std::vector<std::string_view> parts;
  for (std::string_view rest = path; !rest.empty();) {
    const auto slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (part == "." || part == "..") return {"/"};
    if (!part.empty()) parts.push_back(part);
    rest.remove_prefix(slash == std::string_view::npos ? rest.size() : slash + 1);
  }
  std::vector<std::string> out;
  for (std::size_t n = parts.size(); n > 0; --n) {
    std::string dir;
    for (std::size_t i = 0; i < n; ++i) dir.append("/").append(parts[i]);
    out.push_back(std::move(dir));
  }
  out.push_back("/");
  return out;
}

WorkerCount decide_worker_count(unsigned configured, const CpuLimits& limits) {
  if (configured > 0) return {configured, "THREADS"};
  WorkerCount out{0, ""};
  if (limits.affinity_cpus && *limits.affinity_cpus > 0) {
    out.threads = *limits.affinity_cpus;
    out.source = "CPU affinity (" + std::to_string(out.threads) +
                 (limits.online_cpus ? " of " + std::to_string(limits.online_cpus) : "") + ")";
  } else if (limits.online_cpus > 0) {
    out.threads = limits.online_cpus;
    out.source = "online CPUs (" + std::to_string(out.threads) + ")";
  }
  for (const CpuQuota& q : limits.quotas) {
    if (q.quota_us <= 0 || q.period_us <= 0) continue;
    const unsigned cpus = quota_cpus(q);
    if (out.threads == 0 || cpus < out.threads) {
      out.threads = cpus;
      out.source = q.what + " " + std::to_string(q.quota_us) + "/" + std::to_string(q.period_us);
    }
  }
  if (out.threads == 0) return {1, "CPU count unknown"};
  return out;
}

std::vector<CpuQuota> read_cgroup_cpu_quotas(const CgroupFiles& files) {
  ProcCgroups cgroups;
  if (const auto text = read_text(files.proc_self_cgroup)) cgroups = parse_proc_self_cgroup(*text);
  std::vector<CpuQuota> quotas;
  for (const std::string& dir : cgroup_ancestors(cgroups.v2.value_or("/"))) {
    const auto text = read_text(file_in(files.root, dir, "cpu.max"));
    if (!text) continue;
    if (auto q = parse_cgroup_cpu_max(*text)) quotas.push_back(std::move(*q));
  }
  const auto v1_dirs = cgroup_ancestors(cgroups.v1_cpu.value_or("/"));
  for (const char* mount : {"/cpu", "/cpu,cpuacct"}) {
    for (const std::string& dir : v1_dirs) {
      const auto quota = read_text(file_in(files.root + mount, dir, "cpu.cfs_quota_us"));
      if (!quota) continue;
      const auto period = read_text(file_in(files.root + mount, dir, "cpu.cfs_period_us"));
      if (!period) continue;
      if (auto q = parse_cgroup_v1_quota(*quota, *period)) quotas.push_back(std::move(*q));
    }
  }
  return quotas;
}

CpuLimits read_cpu_limits(const CgroupFiles& files) {
  return {affinity_cpus(), std::thread::hardware_concurrency(), read_cgroup_cpu_quotas(files)};
}

WorkerCount worker_count(unsigned configured) {
  if (configured > 0) return decide_worker_count(configured, {});
  return decide_worker_count(0, read_cpu_limits());
}

}  // namespace smartlb::config
