#include "smartlb/config/cpu_limit.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace smartlb {
namespace cpu_limit_test {  // named, not anonymous: tests/CMakeLists.txt

namespace fs = std::filesystem;

config::CpuQuota quota(std::int64_t q, std::int64_t p, std::string what = "cgroup cpu.max") {
  return {q, p, std::move(what)};
}

// cgroup v2 cpu.max

TEST(CpuLimitCpuMax, MaxIsNoLimit) {
  EXPECT_FALSE(config::parse_cgroup_cpu_max("max 100000\n"));
  EXPECT_FALSE(config::parse_cgroup_cpu_max("max 100000"));
}

TEST(CpuLimitCpuMax, OneAndAHalfCpusRoundUpToTwo) {
  const auto q = config::parse_cgroup_cpu_max("150000 100000\n");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->quota_us, 150000);
  EXPECT_EQ(q->period_us, 100000);
  EXPECT_EQ(q->what, "cgroup cpu.max");
  EXPECT_EQ(quota_cpus(*q), 2u);
}

TEST(CpuLimitCpuMax, HalfACpuIsOne) {
  const auto q = config::parse_cgroup_cpu_max("50000 100000\n");
  ASSERT_TRUE(q);
  EXPECT_EQ(quota_cpus(*q), 1u);
}

TEST(CpuLimitCpuMax, WholeCpusAreNotRoundedUp) {
  const auto q = config::parse_cgroup_cpu_max("200000 100000");
  ASSERT_TRUE(q);
  EXPECT_EQ(quota_cpus(*q), 2u);
  EXPECT_EQ(quota_cpus(quota(100001, 100000)), 2u);
  EXPECT_EQ(quota_cpus(quota(400000, 50000)), 8u);
}

TEST(CpuLimitCpuMax, GarbageIsNoLimit) {
  for (const char* bad : {"", "\n", "max", "150000", "150000 100000 7", "abc 100000", "150000 abc",
                          "150000x 100000", "-1 100000", "0 100000", "150000 0", "150000 -100000", "1.5 1",
                          "99999999999999999999 100000", "\x01\x02\xff"}) {
    EXPECT_FALSE(config::parse_cgroup_cpu_max(bad)) << bad;
  }
}

TEST(CpuLimitCpuMax, HugeQuotaDoesNotOverflow) {
  const auto q = config::parse_cgroup_cpu_max("9223372036854775807 1");
  ASSERT_TRUE(q);
  EXPECT_EQ(quota_cpus(*q), std::numeric_limits<unsigned>::max());
}

// cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us

TEST(CpuLimitV1, MinusOneIsNoLimit) { EXPECT_FALSE(config::parse_cgroup_v1_quota("-1\n", "100000\n")); }

TEST(CpuLimitV1, QuotaOverPeriod) {
  const auto q = config::parse_cgroup_v1_quota("250000\n", "100000\n");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->quota_us, 250000);
  EXPECT_EQ(q->period_us, 100000);
  EXPECT_EQ(q->what, "cgroup cpu.cfs_quota_us");
  EXPECT_EQ(quota_cpus(*q), 3u);
}

TEST(CpuLimitV1, GarbageIsNoLimit) {
  EXPECT_FALSE(config::parse_cgroup_v1_quota("", "100000"));
  EXPECT_FALSE(config::parse_cgroup_v1_quota("250000", ""));
  EXPECT_FALSE(config::parse_cgroup_v1_quota("lots", "100000"));
  EXPECT_FALSE(config::parse_cgroup_v1_quota("250000", "0"));
  EXPECT_FALSE(config::parse_cgroup_v1_quota("250000 1", "100000"));
}

// /proc/self/cgroup

TEST(CpuLimitProcCgroup, UnifiedV2) {
  const auto cg =
      config::parse_proc_self_cgroup("0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope\n");
  ASSERT_TRUE(cg.v2);
  EXPECT_EQ(*cg.v2, "/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope");
  EXPECT_FALSE(cg.v1_cpu);
}

TEST(CpuLimitProcCgroup, ContainerRootV2) {
  const auto cg = config::parse_proc_self_cgroup("0::/\n");
  ASSERT_TRUE(cg.v2);
  EXPECT_EQ(*cg.v2, "/");
}

TEST(CpuLimitProcCgroup, HybridV1) {
  const auto cg = config::parse_proc_self_cgroup(
      "12:pids:/docker/abc\n"
      "11:cpuset:/cpuset-elsewhere\n"
      "5:cpuacct:/elsewhere\n"
      "4:cpu,cpuacct:/docker/abc\n"
      "1:name=systemd:/docker/abc\n"
      "0::/docker/abc\n");
  ASSERT_TRUE(cg.v1_cpu);
  EXPECT_EQ(*cg.v1_cpu, "/docker/abc");  // not cpuset's, not cpuacct's
  ASSERT_TRUE(cg.v2);
  EXPECT_EQ(*cg.v2, "/docker/abc");
}

TEST(CpuLimitProcCgroup, CpuControllerAfterOthersAndColonInPath) {
  const auto cg = config::parse_proc_self_cgroup("3:cpuacct,cpu:/a:b\r\n");
  ASSERT_TRUE(cg.v1_cpu);
  EXPECT_EQ(*cg.v1_cpu, "/a:b");
  EXPECT_FALSE(cg.v2);
}

TEST(CpuLimitProcCgroup, GarbageFindsNothing) {
  for (const char* bad : {"", "\n\n", "garbage", "0:", "4:cpu", "4:cpu:", "1:cpuset:/x\n2:cpuacct:/y"}) {
    const auto cg = config::parse_proc_self_cgroup(bad);
    EXPECT_FALSE(cg.v2) << bad;
    EXPECT_FALSE(cg.v1_cpu) << bad;
  }
}

TEST(CpuLimitProcCgroup, Ancestors) {
  EXPECT_EQ(config::cgroup_ancestors("/a/b"), (std::vector<std::string>{"/a/b", "/a", "/"}));
  EXPECT_EQ(config::cgroup_ancestors("/a//b/"), (std::vector<std::string>{"/a/b", "/a", "/"}));
  EXPECT_EQ(config::cgroup_ancestors("/"), (std::vector<std::string>{"/"}));
  EXPECT_EQ(config::cgroup_ancestors(""), (std::vector<std::string>{"/"}));
  EXPECT_EQ(config::cgroup_ancestors("relative"), (std::vector<std::string>{"/"}));
  EXPECT_EQ(config::cgroup_ancestors("/../../outside"), (std::vector<std::string>{"/"}));
  EXPECT_EQ(config::cgroup_ancestors("/a/./b"), (std::vector<std::string>{"/"}));
}

// Combination

TEST(CpuLimitDecide, ThreadsWins) {
  const auto w = config::decide_worker_count(4, {1, 8, {quota(50000, 100000)}});
  EXPECT_EQ(w.threads, 4u);
  EXPECT_EQ(w.source, "THREADS");
}

TEST(CpuLimitDecide, AffinityWithoutQuota) {
  const auto w = config::decide_worker_count(0, {3, 8, {}});
  EXPECT_EQ(w.threads, 3u);
  EXPECT_EQ(w.source, "CPU affinity (3 of 8)");
}

TEST(CpuLimitDecide, QuotaCapsAffinity) {
  const auto w = config::decide_worker_count(0, {8, 8, {quota(150000, 100000)}});
  EXPECT_EQ(w.threads, 2u);
  EXPECT_EQ(w.source, "cgroup cpu.max 150000/100000");
}

TEST(CpuLimitDecide, HalfCpuQuotaGivesOne) {
  const auto w = config::decide_worker_count(0, {8, 8, {quota(50000, 100000)}});
  EXPECT_EQ(w.threads, 1u);
  EXPECT_EQ(w.source, "cgroup cpu.max 50000/100000");
}

TEST(CpuLimitDecide, AffinityBelowQuota) {
  const auto w = config::decide_worker_count(0, {1, 8, {quota(200000, 100000)}});
  EXPECT_EQ(w.threads, 1u);
  EXPECT_EQ(w.source, "CPU affinity (1 of 8)");
}

TEST(CpuLimitDecide, EqualQuotaKeepsAffinityAsSource) {
  const auto w = config::decide_worker_count(0, {2, 8, {quota(200000, 100000)}});
  EXPECT_EQ(w.threads, 2u);
  EXPECT_EQ(w.source, "CPU affinity (2 of 8)");
}

TEST(CpuLimitDecide, TightestQuotaApplies) {
  const auto w = config::decide_worker_count(
      0, {16,
          16,
          {quota(400000, 100000), quota(250000, 100000, "cgroup cpu.cfs_quota_us"), quota(600000, 100000)}});
  EXPECT_EQ(w.threads, 3u);
  EXPECT_EQ(w.source, "cgroup cpu.cfs_quota_us 250000/100000");
}

TEST(CpuLimitDecide, OnlineCpusWhenAffinityUnknown) {
  auto w = config::decide_worker_count(0, {std::nullopt, 6, {}});
  EXPECT_EQ(w.threads, 6u);
  EXPECT_EQ(w.source, "online CPUs (6)");
  w = config::decide_worker_count(0, {std::nullopt, 6, {quota(300000, 100000)}});
  EXPECT_EQ(w.threads, 3u);
  EXPECT_EQ(w.source, "cgroup cpu.max 300000/100000");
}

TEST(CpuLimitDecide, AffinityWithUnknownOnlineCount) {
  const auto w = config::decide_worker_count(0, {2, 0, {}});
  EXPECT_EQ(w.threads, 2u);
  EXPECT_EQ(w.source, "CPU affinity (2)");
}

TEST(CpuLimitDecide, QuotaAloneWhenNothingElseIsKnown) {
  const auto w = config::decide_worker_count(0, {std::nullopt, 0, {quota(150000, 100000)}});
  EXPECT_EQ(w.threads, 2u);
  EXPECT_EQ(w.source, "cgroup cpu.max 150000/100000");
}

TEST(CpuLimitDecide, AtLeastOne) {
  auto w = config::decide_worker_count(0, {std::nullopt, 0, {}});
  EXPECT_EQ(w.threads, 1u);
  EXPECT_EQ(w.source, "CPU count unknown");
  w = config::decide_worker_count(0, {0, 0, {quota(0, 100000), quota(100000, 0)}});  // nonsense ignored
  EXPECT_EQ(w.threads, 1u);
  EXPECT_EQ(w.source, "CPU count unknown");
}

// The file reading, on a fake /sys/fs/cgroup in a temporary directory.

class CpuLimitFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("smartlb_cpu_limit_") + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sys");
    files_.proc_self_cgroup = (dir_ / "proc_self_cgroup").string();
    files_.root = (dir_ / "sys").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& relative, const std::string& text) {
    const fs::path p = dir_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  fs::path dir_;
  config::CgroupFiles files_;
};

TEST_F(CpuLimitFiles, MissingFilesMeanNoLimit) {
  EXPECT_TRUE(read_cgroup_cpu_quotas(files_).empty());
  files_.root = (dir_ / "does-not-exist").string();
  EXPECT_TRUE(read_cgroup_cpu_quotas(files_).empty());
}

TEST_F(CpuLimitFiles, V2OwnCgroup) {
  write("proc_self_cgroup", "0::/kubepods/pod1/ctr\n");
  write("sys/kubepods/pod1/ctr/cpu.max", "150000 100000\n");
  const auto quotas = read_cgroup_cpu_quotas(files_);
  ASSERT_EQ(quotas.size(), 1u);
  EXPECT_EQ(quotas[0].quota_us, 150000);
  EXPECT_EQ(config::decide_worker_count(0, {8, 8, quotas}).source, "cgroup cpu.max 150000/100000");
}

TEST_F(CpuLimitFiles, V2LimitOnAParentApplies) {
  write("proc_self_cgroup", "0::/kubepods/pod1/ctr\n");
  write("sys/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  write("sys/kubepods/pod1/cpu.max", "50000 100000\n");
  const auto quotas = read_cgroup_cpu_quotas(files_);
  ASSERT_EQ(quotas.size(), 1u);
  EXPECT_EQ(config::decide_worker_count(0, {8, 8, quotas}).threads, 1u);
}

TEST_F(CpuLimitFiles, V2RootAsAContainerSeesIt) {
  // Without a cgroup namespace /proc/self/cgroup names the host's path, which does not exist
  // in the container's /sys/fs/cgroup: its own cgroup is mounted at the root.
  write("proc_self_cgroup", "0::/system.slice/docker-abc.scope\n");
  write("sys/cpu.max", "200000 100000\n");
  const auto quotas = read_cgroup_cpu_quotas(files_);
  ASSERT_EQ(quotas.size(), 1u);
  EXPECT_EQ(quota_cpus(quotas[0]), 2u);
}

TEST_F(CpuLimitFiles, MissingProcSelfCgroupStillChecksTheRoot) {
  write("sys/cpu.max", "300000 100000\n");
  const auto quotas = read_cgroup_cpu_quotas(files_);
  ASSERT_EQ(quotas.size(), 1u);
  EXPECT_EQ(quota_cpus(quotas[0]), 3u);
}

TEST_F(CpuLimitFiles, GarbageFilesMeanNoLimit) {
  write("proc_self_cgroup", "\x01\x02 not a cgroup file");
  write("sys/cpu.max", "lots of CPUs");
  write("sys/cpu/cpu.cfs_quota_us", "-1\n");
  write("sys/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_TRUE(read_cgroup_cpu_quotas(files_).empty());
}

TEST_F(CpuLimitFiles, V1Hybrid) {
  write("proc_self_cgroup", "4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n");
  write("sys/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
  write("sys/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  write("sys/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write("sys/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const auto quotas = read_cgroup_cpu_quotas(files_);
  ASSERT_EQ(quotas.size(), 1u);
  const auto w = config::decide_worker_count(0, {8, 8, quotas});
  EXPECT_EQ(w.threads, 3u);
  EXPECT_EQ(w.source, "cgroup cpu.cfs_quota_us 250000/100000");
}

TEST_F(CpuLimitFiles, V1QuotaWithoutPeriodIsNoLimit) {
  write("proc_self_cgroup", "4:cpu:/\n");
  write("sys/cpu/cpu.cfs_quota_us", "250000\n");
  EXPECT_TRUE(read_cgroup_cpu_quotas(files_).empty());
}

TEST(CpuLimitSystem, ReadsThisProcessWithoutFailing) {
  const auto limits = config::read_cpu_limits();
  ASSERT_TRUE(limits.affinity_cpus);  // sched_getaffinity works on Linux
  EXPECT_GE(*limits.affinity_cpus, 1u);
  const auto w = config::worker_count(0);
  EXPECT_GE(w.threads, 1u);
  EXPECT_LE(w.threads, *limits.affinity_cpus);
  EXPECT_FALSE(w.source.empty());
  EXPECT_EQ(config::worker_count(5).threads, 5u);
  EXPECT_EQ(config::worker_count(5).source, "THREADS");
}

}  // namespace cpu_limit_test
}  // namespace smartlb
