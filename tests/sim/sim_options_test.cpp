#include "smartlb/sim/sim_options.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace sim_options_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(ParseSimOptions, DefaultsWhenNoArguments) {
  const auto parsed = parse_sim_options({});
  ASSERT_EQ(parsed.error, "");
  EXPECT_FALSE(parsed.show_help);
  const auto& options = parsed.options;
  EXPECT_EQ(options.listen, "127.0.0.1");
  EXPECT_EQ(options.port, 0);
  EXPECT_EQ(options.threads, 1);
  EXPECT_EQ(options.settings.limiter.kind, LimiterKind::Fixed);  // today's fixed windows
  EXPECT_EQ(options.settings.limiter.window, 60s);
  EXPECT_EQ(options.settings.limiter.burst, 1s);
  EXPECT_FALSE(options.settings.limiter.rpm_interval);
  EXPECT_EQ(options.settings.reports, ReportNoise{});
  EXPECT_EQ(options.settings.stream_chunks, 5);
  EXPECT_EQ(options.settings.chunk_interval, 0ms);
  EXPECT_EQ(options.settings.api_key, "");
  ASSERT_EQ(options.settings.deployments.size(), 1u);
  EXPECT_EQ(options.settings.deployments[0].name, "gpt-4o");
  EXPECT_EQ(options.settings.faults, FaultConfig{});
}

TEST(ParseSimOptions, ServerAndBehaviourFlags) {
  const auto parsed = parse_sim_options({"--port",
                                         "8081",
                                         "--listen=0.0.0.0",
                                         "--name",
                                         "eastus",
                                         "--threads",
                                         "2",
                                         "--deployment",
                                         "a:1000:10",
                                         "--deployment=b:60000",
                                         "--window-seconds",
                                         "0.5",
                                         "--api-key",
                                         "secret",
                                         "--stream-chunks",
                                         "0",
                                         "--chunk-interval-ms",
                                         "20",
                                         "--default-max-tokens",
                                         "32",
                                         "--log-level",
                                         "warn"});
  ASSERT_EQ(parsed.error, "");
  const auto& o = parsed.options;
  EXPECT_EQ(o.port, 8081);
  EXPECT_EQ(o.listen, "0.0.0.0");
  EXPECT_EQ(o.settings.name, "eastus");
  EXPECT_EQ(o.threads, 2);
  ASSERT_EQ(o.settings.deployments.size(), 2u);
  EXPECT_EQ(o.settings.deployments[0].name, "a");
  EXPECT_EQ(o.settings.deployments[1].limits.requests_per_minute, 360);
  EXPECT_EQ(o.settings.limiter.window, 500ms);
  EXPECT_EQ(o.settings.api_key, "secret");
  EXPECT_EQ(o.settings.stream_chunks, 0);
  EXPECT_EQ(o.settings.chunk_interval, 20ms);
  EXPECT_EQ(o.settings.default_max_tokens, 32);
  EXPECT_EQ(o.log_level, "warn");
}

TEST(ParseSimOptions, FaultFlags) {
  const auto parsed = parse_sim_options({"--latency-ms",
                                         "10",
                                         "--error-rate",
                                         "0.5",
                                         "--error-status",
                                         "503",
                                         "--reset-after-chunks",
                                         "2",
                                         "--stall-ms",
                                         "300",
                                         "--stall-before-headers",
                                         "--stall-after-chunks",
                                         "1",
                                         "--force-status",
                                         "429",
                                         "--force-retry-after-ms",
                                         "2000",
                                         "--force-count",
                                         "3",
                                         "--reset-rate",
                                         "0.05",
                                         "--first-token-ms",
                                         "250",
                                         "--first-token-ms-per-1k-prompt-tokens=7.5"});
  ASSERT_EQ(parsed.error, "");
  const FaultConfig expected{10, 0.5, 503, 2, 300, true, 1, 429, 2000, 3, 0.05, 250, 7.5};
  EXPECT_EQ(parsed.options.settings.faults, expected);
}

TEST(ParseSimOptions, LimiterAndReportFlags) {
  const auto parsed = parse_sim_options({"--limiter", "bucket", "--window-seconds", "10",
                                         "--burst-seconds=2.5", "--rpm-interval-seconds", "1",
                                         "--report-jitter", "0.2", "--report-unknown-rate=0.01"});
  ASSERT_EQ(parsed.error, "");
  const auto& settings = parsed.options.settings;
  EXPECT_EQ(settings.limiter.kind, LimiterKind::Bucket);
  EXPECT_EQ(settings.limiter.window, 10s);
  EXPECT_EQ(settings.limiter.burst, 2'500ms);
  ASSERT_TRUE(settings.limiter.rpm_interval);
  EXPECT_EQ(*settings.limiter.rpm_interval, 1s);
  EXPECT_EQ(settings.reports.jitter, 0.2);
  EXPECT_EQ(settings.reports.unknown_rate, 0.01);
  EXPECT_FALSE(settings.limiter.limit_header_per_window) << "the capacity by default";
  EXPECT_TRUE(
      parse_sim_options({"--limit-header", "window"}).options.settings.limiter.limit_header_per_window);
  EXPECT_NE(parse_sim_options({"--limit-header", "bucket"}).error, "");
}

TEST(ParseSimOptions, ReasoningDeploymentsWaitBeforeTheirFirstContent) {
  const auto parsed = parse_sim_options({"--reasoning-deployment", "o3:2.5", "--deployment", "gpt-4o:1000",
                                         "--deployment", "o3:1000", "--reasoning-deployment=o3:4"});
  ASSERT_EQ(parsed.error, "");
  const auto& deployments = parsed.options.settings.deployments;
  ASSERT_EQ(deployments.size(), 2u);
  EXPECT_EQ(deployments[0].reasoning_wait, 0ms);
  EXPECT_EQ(deployments[1].reasoning_wait, 4s);  // the last one given wins
}

TEST(ParseSimOptions, ReasoningDeploymentMayNameTheDefaultDeployment) {
  const auto parsed = parse_sim_options({"--reasoning-deployment", "gpt-4o:1"});
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.options.settings.deployments.at(0).reasoning_wait, 1s);
}

TEST(ParseSimOptions, ReasoningDeploymentMustNameADeployment) {
  const auto parsed = parse_sim_options({"--deployment", "gpt-4o:1000", "--reasoning-deployment", "o3:2"});
  EXPECT_NE(parsed.error.find("no deployment 'o3'"), std::string::npos) << parsed.error;
}

TEST(ParseSimOptions, EveryLimiterModelByName) {
  EXPECT_EQ(parse_sim_options({"--limiter", "fixed"}).options.settings.limiter.kind, LimiterKind::Fixed);
  EXPECT_EQ(parse_sim_options({"--limiter", "sliding"}).options.settings.limiter.kind, LimiterKind::Sliding);
  EXPECT_EQ(parse_sim_options({"--limiter=bucket"}).options.settings.limiter.kind, LimiterKind::Bucket);
}

TEST(ParseSimOptions, Help) {
  EXPECT_TRUE(parse_sim_options({"--help"}).show_help);
  EXPECT_TRUE(parse_sim_options({"-h"}).show_help);
  EXPECT_NE(sim_usage().find("--deployment NAME:TPM:RPM"), std::string::npos);
  EXPECT_NE(sim_usage().find("--limiter MODEL"), std::string::npos);
  EXPECT_NE(sim_usage().find("--reasoning-deployment NAME:SECONDS"), std::string::npos);
  EXPECT_NE(sim_usage().find("--first-token-ms-per-1k-prompt-tokens"), std::string::npos);
}

TEST(ParseSimOptions, Errors) {
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--bogus"},
                                             {"--port"},
                                             {"--port", "70000"},
                                             {"--port", "12x"},
                                             {"--threads", "0"},
                                             {"--deployment", "nope"},
                                             {"--window-seconds", "0"},
                                             {"--error-rate", "2"},
                                             {"--reset-rate", "-1"},
                                             {"--limiter", "leaky"},
                                             {"--limiter", "Fixed"},
                                             {"--burst-seconds", "0"},
                                             {"--rpm-interval-seconds", "0"},
                                             {"--rpm-interval-seconds", "x"},
                                             {"--report-jitter", "1.5"},
                                             {"--report-jitter", "-0.1"},
                                             {"--report-unknown-rate", "2"},
                                             {"--error-status", "42"},
                                             {"--force-status", "1000"},
                                             {"--log-level", "loud"},
                                             {"--first-token-ms", "-1"},
                                             {"--first-token-ms-per-1k-prompt-tokens", "x"},
                                             {"--reasoning-deployment", "o3"},
                                             {"--reasoning-deployment", "gpt-4o:-2"},
                                             {"--stall-before-headers=1"}}) {
    const auto parsed = parse_sim_options(bad);
    EXPECT_FALSE(parsed.error.empty()) << bad[0];
  }
}

}  // namespace sim_options_test
}  // namespace smartlb::sim
