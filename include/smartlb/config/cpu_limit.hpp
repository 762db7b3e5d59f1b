#pragma once
// How many CPUs the process may actually use: the default worker count (THREADS=0).
//
// The node's CPU count (std::thread::hardware_concurrency) ignores the CPU affinity mask
// (taskset, docker --cpuset-cpus, the Kubernetes static CPU manager) and the cgroup CPU quota
// (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us: docker --cpus, Kubernetes CPU
// limits). The decisions are pure functions of file contents; read_cpu_limits() is the only
// part that touches the system. A missing or malformed file means "no limit from there".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb::config {

// A CPU quota: quota_us of CPU time per period_us of wall time (both > 0).
struct CpuQuota {
  std::int64_t quota_us = 0;
  std::int64_t period_us = 0;
  std::string what;  // where it comes from, for the log: "cgroup cpu.max", "cgroup cpu.cfs_quota_us"
};

// cgroup v2 cpu.max: "max 100000" (no limit: nullopt) or "150000 100000".
std::optional<CpuQuota> parse_cgroup_cpu_max(std::string_view text);

// cgroup v1 cpu.cfs_quota_us ("-1": no limit) and cpu.cfs_period_us.
std::optional<CpuQuota> parse_cgroup_v1_quota(std::string_view quota_text, std::string_view period_text);

// The whole CPUs a quota allows: ceil(quota / period), at least 1.
unsigned quota_cpus(const CpuQuota& q);

// The process's cgroups from /proc/self/cgroup: the v2 path (the line "0::/path") and the
// v1 path of the hierarchy with the "cpu" controller ("4:cpu,cpuacct:/path"). Both can be
// present (the hybrid layout).
struct ProcCgroups {
  std::optional<std::string> v2;
  std::optional<std::string> v1_cpu;
};
ProcCgroups parse_proc_self_cgroup(std::string_view text);

// A cgroup path and its ancestors, innermost first, always ending with "/": a limit set on a
// parent (a Kubernetes pod, a systemd slice) applies too. "/a/b" -> {"/a/b", "/a", "/"}.
// A path that is not absolute or has a "." or ".." component gives only {"/"}.
std::vector<std::string> cgroup_ancestors(std::string_view path);

// What limits the process's CPUs.
struct CpuLimits {
  std::optional<unsigned> affinity_cpus;  // CPUs in the affinity mask (sched_getaffinity)
  unsigned online_cpus = 0;               // std::thread::hardware_concurrency(); 0 if unknown
  std::vector<CpuQuota> quotas;           // every cgroup quota found; the tightest applies
};

struct WorkerCount {
  unsigned threads = 1;
  std::string source;  // e.g. "THREADS", "CPU affinity (3 of 8)", "cgroup cpu.max 150000/100000"
};

// THREADS when set (configured > 0); otherwise the affinity count (or the online CPUs when
// the mask is unknown), capped by the tightest quota; at least 1.
WorkerCount decide_worker_count(unsigned configured, const CpuLimits& limits);

// Where the cgroup files are; tests point these at a temporary directory.
struct CgroupFiles {
  std::string proc_self_cgroup = "/proc/self/cgroup";
  std::string root = "/sys/fs/cgroup";
};

// Reads cpu.max (v2) and cpu.cfs_quota_us / cpu.cfs_period_us (v1, under root/cpu and
// root/cpu,cpuacct) of the process's cgroup, its ancestors and the root, as a container
// usually sees its own cgroup there.
std::vector<CpuQuota> read_cgroup_cpu_quotas(const CgroupFiles& files = {});

// The affinity mask of the calling thread, the online CPUs and the cgroup quotas.
CpuLimits read_cpu_limits(const CgroupFiles& files = {});

// decide_worker_count(configured, read_cpu_limits()), reading nothing when configured > 0.
WorkerCount worker_count(unsigned configured);

}  // namespace smartlb::config
