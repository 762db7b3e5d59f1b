// Access-log lines and listener start-up errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "proxy_harness.hpp"
#include "smartlb/telemetry/logging.hpp"

namespace smartlb::testing {
namespace logging_test {  // named, not anonymous: tests/CMakeLists.txt

telemetry::RequestRecord sample_record() {
  telemetry::RequestRecord rec;
  rec.method = "POST";
  rec.path = "/openai/deployments/gpt/chat/completions";
  rec.deployment = "gpt";
  rec.request_id = "rid-1";
  rec.client = "team-search";
  rec.status = 200;
  rec.served_by = 1;
  rec.start = 0;
  rec.end = 12'500'000;
  telemetry::AttemptRecord& first = rec.add_attempt();
  first.backend = 0;
  first.status = 429;
  first.cause = routing::FailureCause::Throttled;
  first.cooldown_ms = 5000;
  rec.add_attempt().backend = 1;
  rec.attempts[1].status = 200;
  return rec;
}

config::Config two_backends() {
  config::Config cfg;
  cfg.backends.resize(2);
  cfg.backends[0].name = "east";
  cfg.backends[1].name = "west";
  return cfg;
}

TEST(AccessLog, JsonLineHasUtcTimeAndEveryAttempt) {
  const auto j = nlohmann::json::parse(format_access_line(sample_record(), two_backends(), true));
  EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  EXPECT_EQ(j["request_id"], "rid-1");
  EXPECT_EQ(j["backend"], "west");
  EXPECT_EQ(j["client"], "team-search") << "the caller's name, never its key";
  EXPECT_EQ(j["attempts"], 2);
  EXPECT_EQ(j["attempt_log"][0]["backend"], "east");
  EXPECT_EQ(j["attempt_log"][0]["outcome"], "throttled");
  EXPECT_EQ(j["attempt_log"][1]["outcome"], "served");
  EXPECT_DOUBLE_EQ(j["duration_ms"].get<double>(), 12.5);
}

TEST(AccessLog, TheTraceIdIsInTheJsonLineOnlyWithTracingOn) {
  telemetry::RequestRecord rec = sample_record();
  EXPECT_FALSE(nlohmann::json::parse(format_access_line(rec, two_backends(), true)).contains("trace_id"));
  rec.trace.on = true;
  for (std::size_t i = 0; i < rec.trace.trace_id.size(); ++i)
    rec.trace.trace_id[i] = static_cast<std::uint8_t>(0xf0 + i);
  const auto j = nlohmann::json::parse(format_access_line(rec, two_backends(), true));
  EXPECT_EQ(j["trace_id"], "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
  EXPECT_EQ(j["trace_sampled"], false);
}

TEST(AccessLog, AProbeIsMarkedInTheJsonAttemptLog) {
  telemetry::RequestRecord rec = sample_record();
  rec.attempts[1].probe = true;  // sent to test a target its rate-limit reports held back
  const auto j = nlohmann::json::parse(format_access_line(rec, two_backends(), true));
  EXPECT_FALSE(j["attempt_log"][0].contains("probe"));
  EXPECT_EQ(j["attempt_log"][1]["probe"], true);
}

TEST(AccessLog, TextLineNamesTheOneAttemptOfARequestNobodyServed) {
  telemetry::RequestRecord rec = sample_record();
  rec.attempt_count = 1;
  rec.served_by = -1;
  rec.status = 404;
  rec.attempts[0].status = 404;
  rec.attempts[0].cause = routing::FailureCause::NotFound;
  const std::string line = format_access_line(rec, two_backends(), false);
  EXPECT_NE(line.find("status=404 attempts=1 (east:404)"), std::string::npos) << line;
}

TEST(AccessLog, TextLineNamesClientBackendStatusAndAttempts) {
  const std::string line = format_access_line(sample_record(), two_backends(), false);
  EXPECT_EQ(
      line,
      "POST /openai/deployments/gpt/chat/completions client=team-search backend=west status=200 attempts=2 "
      "(east:429, west:200) duration_ms=12.5 id=rid-1");
}

TEST(AccessLog, ARequestOfALowerPriorityClassNamesItsClass) {
  telemetry::RequestRecord rec = sample_record();
  rec.priority_class = "batch";
  const std::string line = format_access_line(rec, two_backends(), false);
  EXPECT_NE(line.find(" client=team-search class=batch backend=west "), std::string::npos) << line;
  EXPECT_EQ(nlohmann::json::parse(format_access_line(rec, two_backends(), true))["priority_class"], "batch");
  EXPECT_FALSE(nlohmann::json::parse(format_access_line(sample_record(), two_backends(), true))
                   .contains("priority_class"))
      << "the first class is not named";
}

TEST(AccessLog, ARequestThatWaitedForCapacitySaysHowLong) {
  telemetry::RequestRecord rec = sample_record();
  rec.queued_ms = 1250;
  const std::string line = format_access_line(rec, two_backends(), false);
  EXPECT_NE(line.find(" queued_ms=1250"), std::string::npos) << line;
  EXPECT_EQ(nlohmann::json::parse(format_access_line(rec, two_backends(), true))["queued_ms"], 1250);
  EXPECT_EQ(format_access_line(sample_record(), two_backends(), false).find("queued_ms"), std::string::npos);
}

TEST(AccessLog, APricedAnswerCarriesItsCostAndCachedTokens) {
  telemetry::RequestRecord rec = sample_record();
  EXPECT_FALSE(nlohmann::json::parse(format_access_line(rec, two_backends(), true)).contains("cost"));
  rec.prompt_tokens = 2006;
  rec.cached_tokens = 1920;
  rec.completion_tokens = 300;
  rec.cost = 5'615'000'000;  // $0.005615 in pico-dollars
  rec.cost_model = "gpt-4o";
  const auto j = nlohmann::json::parse(format_access_line(rec, two_backends(), true));
  EXPECT_DOUBLE_EQ(j["cost"].get<double>(), 0.005615);
  EXPECT_EQ(j["cost_model"], "gpt-4o");
  EXPECT_EQ(j["cached_tokens"], 1920);
  const std::string line = format_access_line(rec, two_backends(), false);
  EXPECT_NE(line.find(" duration_ms=12.5 cost=0.005615 id=rid-1"), std::string::npos) << line;
}

TEST(Listener, APortAlreadyInUseIsRefusedDespiteReusePort) {
  ProxyHarness first;
  first.add_backend("b", "http://127.0.0.1:9");
  first.start();
  ProxyHarness second;
  second.cfg.port = first.port();
  second.add_backend("b", "http://127.0.0.1:9");
  EXPECT_THROW(second.start(), std::runtime_error) << "a second instance must not share the port";
}

}  // namespace logging_test
}  // namespace smartlb::testing
