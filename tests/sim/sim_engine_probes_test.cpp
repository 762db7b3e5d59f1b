// Health probes (GET .../models) in the engine: answered without a key, counted apart from the
// API requests, and seeing only the faults that make a backend look dead.

#include "engine_test_fixture.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_engine_probes_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;
using test::header;

constexpr const char* kAzureProbe = "/openai/models?api-version=2024-10-21";
constexpr const char* kChat = "/v1/chat/completions";
constexpr const char* kChatBody = R"({"model":"gpt-4o","messages":[{"content":"hi"}]})";

using SimEngineProbesTest = test::EngineTest;

TEST_F(SimEngineProbesTest, EveryProbePathListsTheDeploymentsWithoutAKey) {
  for (const char* target : {kAzureProbe, "/v1/models", "/openai/v1/models", "/anthropic/v1/models"}) {
    const auto response = get(target);  // no key, though the sim has one
    ASSERT_EQ(response.status, 200) << target << ": " << response.body;
    EXPECT_EQ(response.content_type, "application/json");
    EXPECT_EQ(header(response, "x-sim-name"), "eastus");
    const auto body = json::parse(response.body);
    EXPECT_EQ(body["object"], "list");
    ASSERT_EQ(body["data"].size(), 2u);
    EXPECT_EQ(body["data"][0]["id"], "claude");
    EXPECT_EQ(body["data"][0]["object"], "model");
    EXPECT_EQ(body["data"][1]["id"], "gpt-4o");
  }
}

TEST_F(SimEngineProbesTest, AWrongKeyDoesNotMatterEither) {
  EXPECT_EQ(get("/v1/models", {{"api-key", "bad"}}).status, 200);
}

TEST_F(SimEngineProbesTest, ProbesAreCountedApartFromApiRequests) {
  ASSERT_EQ(post(kChat, kChatBody).status, 200);
  ASSERT_EQ(get("/v1/models").status, 200);
  ASSERT_EQ(get(kAzureProbe).status, 200);
  ASSERT_EQ(get("/openai/models").status, 400);  // Azure's needs an api-version
  const auto stats = engine().stats_json();
  EXPECT_EQ(stats["requests"], 1);
  EXPECT_EQ(stats["by_status"], (json{{"200", 1}}));
  EXPECT_EQ(stats["tokens_served"], 1 + 5);
  EXPECT_EQ(stats["deployments"]["gpt-4o"]["requests"], 1);
  EXPECT_EQ(stats["probes"], 3);
  EXPECT_EQ(stats["probes_by_status"], (json{{"200", 2}, {"400", 1}}));
  EXPECT_EQ(stats["last_request_path"], kChat);  // a probe is not the latest API request
}

TEST_F(SimEngineProbesTest, OnlyGetIsAllowed) {
  const auto response = post("/v1/models", "{}");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(header(response, "allow"), "GET");
  EXPECT_EQ(engine().stats_json()["requests"], 0);
}

TEST_F(SimEngineProbesTest, ForcedServerErrorReachesProbesWithoutCountingDown) {
  set_faults(R"({"force_status":503,"force_count":1})");
  const auto probe = get("/v1/models");
  EXPECT_EQ(probe.status, 503);
  EXPECT_EQ(json::parse(probe.body)["error"]["code"], "503");
  EXPECT_EQ(get(kAzureProbe).status, 503);
  EXPECT_EQ(engine().faults().force_count, 1);  // left to the API request a test scripted
  EXPECT_EQ(post(kChat, kChatBody).status, 503);
  EXPECT_EQ(get("/v1/models").status, 200);  // recovered with the API
}

TEST_F(SimEngineProbesTest, AForced429DoesNotReachProbes) {
  set_faults(R"({"force_status":429})");
  EXPECT_EQ(get("/v1/models").status, 200);
  EXPECT_EQ(post(kChat, kChatBody).status, 429);
}

TEST_F(SimEngineProbesTest, AStallBeforeTheHeadersReachesProbes) {
  set_faults(R"({"stall_ms":30000,"stall_before_headers":true})");
  const auto stalled = get("/v1/models");
  EXPECT_EQ(stalled.status, 200);
  EXPECT_EQ(stalled.stall, 30'000ms);
  EXPECT_TRUE(stalled.stall_before_headers);
  set_faults(R"({"stall_before_headers":false})");  // a stall after the headers: the server is up
  EXPECT_EQ(get("/v1/models").stall, 0ms);
}

TEST_F(SimEngineProbesTest, OtherFaultsDoNotReachProbes) {
  set_faults(R"({"error_rate":1,"latency_ms":250,"reset_rate":1,"reset_after_chunks":0})");
  draws_ = {0.0};
  const auto probe = get("/v1/models");
  EXPECT_EQ(probe.status, 200);
  EXPECT_EQ(probe.latency, 0ms);
  EXPECT_FALSE(probe.reset_after_events);
  EXPECT_FALSE(probe.reset_before_headers);
  EXPECT_EQ(draws_.size(), 1u);  // nothing drawn
}

TEST_F(SimEngineProbesTest, ResetZeroesTheProbeCount) {
  ASSERT_EQ(get("/v1/models").status, 200);
  ASSERT_EQ(post("/_sim/reset", "", {}).status, 200);
  EXPECT_EQ(engine().stats_json()["probes"], 0);
}

}  // namespace sim_engine_probes_test
}  // namespace smartlb::sim
