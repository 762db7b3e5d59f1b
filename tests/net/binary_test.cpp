// The smartlb executable as users run it: flags, refusing a bad configuration, and a clean
// exit on SIGTERM.
#include <gtest/gtest.h>

#include <sstream>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "child_process.hpp"
#include "continuous_traffic.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"

namespace smartlb::testing {
namespace binary_test {  // named, not anonymous: tests/CMakeLists.txt

// The smartlb executable with `args` and only the environment `env` (health probes off: they
// would add requests to the mock backends the tests count).
class Child : public ChildProcess {
 public:
  Child(std::vector<std::string> args, std::vector<std::string> env)
      : ChildProcess(SMARTLB_BINARY, std::move(args), with_probes_off(std::move(env))) {}

 private:
  static std::vector<std::string> with_probes_off(std::vector<std::string> env) {
    env.push_back("HEALTH_PROBE_SECONDS=0");
    return env;
  }
};

// Waits for the child's "listening on" line and returns its API port (0 when it never came).
std::uint16_t api_port(Child& c) {
  const std::string started = c.read_until(" backend(s)");
  constexpr std::string_view kListening = "listening on 127.0.0.1:";
  const auto at = started.find(kListening);
  return at == std::string::npos
             ? 0
             : static_cast<std::uint16_t>(std::stoi(started.substr(at + kListening.size())));
}

// --help fits one screen (at most 50 lines of 80 columns) and names every section of the file;
// --help-env lists every variable.
TEST(Binary, HelpAndVersion) {
  Child help({"--help"}, {});
  EXPECT_EQ(help.wait_exit(), 0);
  const std::string text = help.output();
  EXPECT_NE(text.find("BACKEND_X_URL"), std::string::npos);
  std::istringstream lines(text);
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_LE(count, 50u) << text;
  for (const char* section :
       {"backends", "rules", "prices", "admin", "subject_limits", "redis", "virtual_models"})
    EXPECT_NE(text.find(std::string(" ") + section), std::string::npos) << section << " in:\n" << text;
  Child env({"--help-env"}, {});
  EXPECT_EQ(env.wait_exit(), 0);
  EXPECT_NE(env.output().find("OTEL_TRACES_EXPORTER"), std::string::npos);
  Child version({"--version"}, {});
  EXPECT_EQ(version.wait_exit(), 0);
  EXPECT_EQ(version.output().rfind("smartlb ", 0), 0u);
}

TEST(Binary, BadConfigurationRefusesToStartNamingEveryVariableWithoutTheKey) {
  Child c({}, {"BACKEND_1_URL=not-a-url", "BACKEND_1_APIKEY=sk-very-secret-value ",
               "BACKEND_2_URL=https://ok.example.com", "BACKEND_2_WEIGHT=-3", "PORT=http"});
  EXPECT_EQ(c.wait_exit(), 2);
  const std::string out = c.output();
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
  Child c({}, {"BACKEND_1_URL=" + backend.url(), "BACKEND_1_APIKEY=sk-secret-in-config", "PORT=0",
               "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1", "THREADS=1"});
  const std::uint16_t port = api_port(c);
  ASSERT_NE(port, 0) << c.output();
  auto r = http_call(port, "POST", "/v1/chat/completions", {}, "{}");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer sk-secret-in-config");
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait_exit(), 0);
  EXPECT_NE(c.output().find("draining"), std::string::npos);
  EXPECT_EQ(c.output().find("sk-secret-in-config"), std::string::npos) << "no key in the log:\n"
                                                                       << c.output();
}

// The process's FDSize (descriptor slots in its table), 0 when unknown.
std::size_t descriptor_table_size_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("FDSize:", 0) == 0) return std::stoul(line.substr(7));
  return 0;
}

// A table grown while connections arrive stalls the worker for an RCU grace period at each
// doubling (src/app/descriptor_table.cpp): it is grown at start, for two descriptors per
// allowed connection.
TEST(Binary, StartsWithADescriptorTableForEveryAllowedConnection) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  Child c({}, {"BACKEND_1_URL=" + backend.url(), "PORT=0", "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1",
               "THREADS=1", "MAX_CONNECTIONS=3000"});
  ASSERT_NE(api_port(c), 0) << c.output();
  rlimit rl{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
  const std::size_t wanted = std::min<std::size_t>(rl.rlim_max, 2 * 3000 + 1024);
  EXPECT_GE(descriptor_table_size_of(c.pid()), wanted);
}

// Replaces `path` atomically (a new file renamed over it), as editors and kubelet do.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
  }
  ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0);
}

std::string rules_to(const std::string& backend, const std::string& url) {
  return "backends: [{name: " + backend + ", url: \"" + url + "\"}]\n" +
         "targets: [{id: t, backend: " + backend + "}]\n" +
         "rules: [{id: r, type: weight-based-routing, load_balance_targets: [{target: t}]}]\n";
}

TEST(Binary, CheckConfigPrintsEveryErrorWithItsPathOrASummary) {
  const std::string path = ::testing::TempDir() + "smartlb_check_" + std::to_string(::getpid()) + ".yaml";
  write_file(
      path,
      "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\n"
      "targets: [{id: t, backend: b}]\n"
      "rules: [{id: r, type: weight-based-routing, load_balance_targets: [{target: t, weight: 0}]}]\n");
  Child bad({"--check-config", "--config", path}, {});
  EXPECT_EQ(bad.wait_exit(), 1);
  EXPECT_NE(bad.output().find("targets[0].backend: no backend is named \"b\""), std::string::npos)
      << bad.output();
  EXPECT_NE(bad.output().find("rules[0].load_balance_targets[0].weight: must be a positive integer"),
            std::string::npos)
      << bad.output();
  write_file(path, rules_to("a", "http://127.0.0.1:9"));
  Child good({"--check-config"}, {"CONFIG_FILE=" + path});
  EXPECT_EQ(good.wait_exit(), 0);
  EXPECT_NE(good.output().find("rule r: weight-based-routing, every request"), std::string::npos)
      << good.output();
  std::remove(path.c_str());
}

TEST(Binary, TenRewritesOfTheFileUnderContinuousTrafficLoseNoRequest) {
  MockBackend a([](const SeenRequest&) { return MockReply{200, {}, "a"}; });
  MockBackend b([](const SeenRequest&) { return MockReply{200, {}, "b"}; });
  const std::string path = ::testing::TempDir() + "smartlb_traffic_" + std::to_string(::getpid()) + ".yaml";
  write_file(path, rules_to("a", a.url()));
  Child c({"--config", path}, {"PORT=0", "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1", "THREADS=2",
                               "CONFIG_WATCH_INTERVAL_MS=20", "ACCESS_LOG=off"});
  const std::uint16_t port = api_port(c);
  ASSERT_NE(port, 0) << c.output();

  ContinuousTraffic traffic(port, "/openai/deployments/m/chat/completions?api-version=1");
  for (int i = 1; i <= 10; ++i) {
    write_file(path, i % 2 == 1 ? rules_to("b", b.url()) : rules_to("a", a.url()));
    c.read_until("configuration reloaded (file changed)", static_cast<std::size_t>(i));
  }
  traffic.stop();
  const std::string out = c.output();
  std::size_t reloads = 0;
  for (auto p = out.find("configuration reloaded (file changed)"); p != std::string::npos;
       p = out.find("configuration reloaded (file changed)", p + 1))
    ++reloads;
  EXPECT_EQ(reloads, 10u) << out;
  EXPECT_EQ(traffic.failed(), 0) << "of " << traffic.sent();
  EXPECT_GT(a.request_count(), 0u);
  EXPECT_GT(b.request_count(), 0u);
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait_exit(), 0);
  std::remove(path.c_str());
}

TEST(Binary, AChangedFileIsReloadedAndAnInvalidOneKeepsTheRunningConfiguration) {
  MockBackend a([](const SeenRequest&) { return MockReply{200, {}, "a"}; });
  MockBackend b([](const SeenRequest&) { return MockReply{200, {}, "b"}; });
  const std::string path = ::testing::TempDir() + "smartlb_reload_" + std::to_string(::getpid()) + ".yaml";
  write_file(path, rules_to("a", a.url()));
  Child c({"--config", path},
          {"PORT=0", "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1", "THREADS=1", "CONFIG_WATCH_INTERVAL_MS=20"});
  const std::uint16_t port = api_port(c);
  ASSERT_NE(port, 0) << c.output();
  const std::string target = "/openai/deployments/m/chat/completions?api-version=1";
  EXPECT_EQ(http_call(port, "POST", target, {}, "{}").body, "a");

  write_file(path, rules_to("b", b.url()));
  c.read_until("configuration reloaded (file changed)");
  EXPECT_EQ(http_call(port, "POST", target, {}, "{}").body, "b");

  write_file(path, "rules: [{id: r, type: nonsense}]\n");
  c.read_until("refused");
  EXPECT_EQ(http_call(port, "POST", target, {}, "{}").body, "b") << "the running configuration stays";

  {  // Written in place (no rename): SIGHUP is how to say it is complete.
    std::ofstream out(path, std::ios::trunc);
    out << rules_to("a", a.url());
  }
  c.signal(SIGHUP);
  // Loaded once: by SIGHUP or the watch, whichever came first; the other finds it loaded.
  c.read_until("is unchanged since it was loaded; nothing to do");
  EXPECT_EQ(http_call(port, "POST", target, {}, "{}").body, "a");
  const std::string out = c.output();
  std::size_t reloads = 0;
  for (auto p = out.find("configuration reloaded ("); p != std::string::npos;
       p = out.find("configuration reloaded (", p + 1))
    ++reloads;
  EXPECT_EQ(reloads, 2u) << "b's, then a's once:\n" << out;
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait_exit(), 0);
  std::remove(path.c_str());
}

}  // namespace binary_test
}  // namespace smartlb::testing
