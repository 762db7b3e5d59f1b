// A key given in configuration never appears in logs, /status, /metrics or the status page.
// Runs the real smartlb binary (debug logging, text and JSON formats) in front of a backend
// that checks the key and one that rejects its key (the error path that names the key's
// variable), then scrapes every admin endpoint and reads everything the process printed.
#include <gtest/gtest.h>

#include <memory>
#include <regex>

#include <nlohmann/json.hpp>

#include "admin_daemon.hpp"
#include "admin_promtool.hpp"
#include "child_process.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"

namespace smartlb {
namespace key_leak_test {  // named, not anonymous: tests/CMakeLists.txt

using smartlb::testing::ChildProcess;
using smartlb::testing::http_call;
using smartlb::testing::inherited_environment;
using smartlb::testing::MockBackend;
using smartlb::testing::MockReply;
using smartlb::testing::SeenRequest;

// Distinctive so that any fragment of it is recognisable.
const std::string kKeyGood = "sk-leakcanary-good-5e1f0c93a7b24d68";
const std::string kKeyBad = "sk-leakcanary-bad-91d2b7e04c6fa835";

// Every 8-character window of the keys' random parts: a truncated or partly masked key
// would still be caught.
std::vector<std::string> key_fragments() {
  std::vector<std::string> out = {kKeyGood, kKeyBad, "leakcanary"};
  for (const std::string& k : {kKeyGood, kKeyBad}) {
    const std::string tail = k.substr(k.rfind('-') + 1);
    for (std::size_t i = 0; i + 8 <= tail.size(); ++i) out.push_back(tail.substr(i, 8));
  }
  return out;
}

void expect_no_key(const std::string& where, const std::string& text) {
  for (const auto& f : key_fragments())
    EXPECT_EQ(text.find(f), std::string::npos) << "key fragment '" << f << "' found in " << where;
}

MockReply json_reply(unsigned status, std::string body) {
  return {status, {{"Content-Type", "application/json"}}, std::move(body)};
}

class KeyLeakTest : public ::testing::TestWithParam<const char*> {};

TEST_P(KeyLeakTest, ConfiguredKeysNeverAppearInLogsStatusOrMetrics) {
  const std::string log_format = GetParam();
  // "bad" (priority 1) rejects its key; "good" (priority 2) accepts only its own.
  MockBackend bad([](const SeenRequest&) {
    return json_reply(
        401, R"({"error":{"code":"401","message":"Access denied due to invalid subscription key."}})");
  });
  MockBackend good([](const SeenRequest& req) {
    if (req.header("api-key") != kKeyGood && req.header("authorization") != "Bearer " + kKeyGood)
      return json_reply(401, R"({"error":{"code":"401"}})");
    return json_reply(200, R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}})");
  });
  // The test's own environment (without any BACKEND_ variable of its own) plus the configuration.
  const auto environment = [&](std::uint16_t admin_port) {
    std::vector<std::string> env = inherited_environment("BACKEND_");
    env.insert(env.end(), {"BACKEND_1_URL=" + bad.url(), "BACKEND_1_NAME=bad", "BACKEND_1_APIKEY=" + kKeyBad,
                           "BACKEND_2_URL=" + good.url(), "BACKEND_2_NAME=good", "BACKEND_2_PRIORITY=2",
                           "BACKEND_2_APIKEY=" + kKeyGood, "LISTEN_ADDRESS=127.0.0.1", "PORT=0",
                           "ADMIN_PORT=" + std::to_string(admin_port), "THREADS=1", "LOG_LEVEL=trace",
                           "LOG_FORMAT=" + log_format});
    return env;
  };
  const testing::AdminDaemon started = testing::start_with_admin_port(environment);
  ChildProcess& d = *started.child;
  ASSERT_NE(started.api_port, 0) << d.output();
  const std::uint16_t port = started.api_port;
  const std::uint16_t admin_port = started.admin_port;

  const std::string body = R"({"messages":[{"role":"user","content":"hi"}]})";
  const auto r1 =
      http_call(port, "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01", {}, body);
  EXPECT_EQ(r1.status, 200u) << r1.body;
  const auto r2 = http_call(port, "POST", "/v1/chat/completions", {{"authorization", "Bearer client-token"}},
                            R"({"model":"gpt-4o","messages":[]})");
  EXPECT_EQ(r2.status, 200u) << r2.body;
  d.read_until("\"type\":\"access\"", log_format == "json" ? 2 : 0);
  if (log_format == "text") d.read_until(" id=", 2);

  // The daemon really used the keys (on the requests it forwarded: its health probes carry none).
  const auto forwarded = [](std::vector<SeenRequest> all) {
    std::erase_if(all, [](const SeenRequest& r) { return r.method != "POST"; });
    return all;
  };
  const auto seen_good = forwarded(good.requests());
  ASSERT_FALSE(seen_good.empty());
  EXPECT_EQ(seen_good.front().header("api-key"), kKeyGood);
  EXPECT_EQ(seen_good.back().header("authorization"), "Bearer " + kKeyGood)
      << "the client's own token was replaced by the configured key";
  const auto seen_bad = forwarded(bad.requests());
  ASSERT_FALSE(seen_bad.empty());
  EXPECT_EQ(seen_bad.front().header("api-key"), kKeyBad);

  const auto status = http_call(admin_port, "GET", "/status");
  ASSERT_EQ(status.status, 200u);
  expect_no_key("/status", status.body);
  const auto j = nlohmann::json::parse(status.body);
  EXPECT_EQ(j["backends"][0]["state"], "auth_failed") << status.body;

  const auto metrics = http_call(admin_port, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200u);
  expect_no_key("/metrics", metrics.body);
  EXPECT_NE(metrics.body.find(R"(smartlb_backend_state{backend="bad",state="auth_failed"} 1)"),
            std::string::npos);
  const auto check = test::promtool_check_metrics(metrics.body);
  ASSERT_TRUE(check.ran) << check.output;
  EXPECT_EQ(check.exit_code, 0) << check.output;

  const auto page = http_call(admin_port, "GET", "/");
  expect_no_key("/", page.body);

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(), 0);
  const std::string logs = d.output();
  EXPECT_NE(logs.find("rejected its credentials"), std::string::npos)
      << "the auth-failure path (which names the key's variable) was logged:\n"
      << logs;
  expect_no_key("the logs", logs);
}

INSTANTIATE_TEST_SUITE_P(LogFormats, KeyLeakTest, ::testing::Values("text", "json"));

}  // namespace key_leak_test
}  // namespace smartlb
