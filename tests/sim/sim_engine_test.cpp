#include "smartlb/sim/sim_engine.hpp"

#include <deque>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_engine_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kChatPath = "/openai/deployments/small/chat/completions?api-version=2024-02-01";
constexpr const char* kChatBody =
    R"({"messages":[{"role":"user","content":"0123456789abcdef"}],"max_tokens":10})";  // cost 4 + 10

std::string header(const SimResponse& response, std::string_view name) {
  const auto value = find_header(response.headers, name);
  return value ? std::string(*value) : std::string("<absent>");
}

class SimEngineTest : public ::testing::Test {
 protected:
  SimEngineTest() { settings_ = make_settings(); }

  static SimSettings make_settings() {
    SimSettings settings;
    settings.name = "eastus";
    settings.api_key = "k1";
    settings.deployments = {{"gpt-4o", {1'000'000, 1'000}}, {"small", {100, 10}}};
    settings.chunk_interval = 7ms;
    return settings;
  }

  SimEngine& engine() {
    if (!engine_) {
      engine_ = std::make_unique<SimEngine>(settings_, clock_, [this] {
        const double draw = draws_.empty() ? 0.999 : draws_.front();
        if (!draws_.empty()) draws_.pop_front();
        return draw;
      });
    }
    return *engine_;
  }

  SimResponse post(std::string target, std::string body, HeaderList headers = {{"api-key", "k1"}}) {
    return engine().handle({"POST", std::move(target), std::move(headers), std::move(body)});
  }
  SimResponse get(std::string target) { return engine().handle({"GET", std::move(target), {}, ""}); }
  SimResponse chat(std::string body = kChatBody) { return post(kChatPath, std::move(body)); }
  void set_faults(const std::string& patch) {
    ASSERT_EQ(post("/_sim/faults", patch, {}).status, 200) << patch;
  }

  SimSettings settings_;
  ManualClock clock_;
  std::deque<double> draws_;
  std::unique_ptr<SimEngine> engine_;
};

TEST_F(SimEngineTest, AzureChatCompletionAnswers200WithUsageAndQuotaHeaders) {
  const auto response = chat();
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_FALSE(response.stream);
  const auto body = json::parse(response.body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "small");
  EXPECT_EQ(body["created"], clock_.unix_seconds());
  EXPECT_EQ(body["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 9);
  EXPECT_EQ(header(response, "x-ratelimit-remaining-requests"), "9");
  EXPECT_EQ(header(response, "x-ratelimit-remaining-tokens"), "86");
  EXPECT_EQ(header(response, "x-ratelimit-limit-requests"), "10");
  EXPECT_EQ(header(response, "x-ratelimit-limit-tokens"), "100");
  EXPECT_EQ(header(response, "x-sim-name"), "eastus");
  EXPECT_EQ(header(response, "x-request-id"), body["id"].get<std::string>());
}

TEST_F(SimEngineTest, ResponseIdsAreUnique) {
  EXPECT_NE(json::parse(chat().body)["id"], json::parse(chat().body)["id"]);
}

TEST_F(SimEngineTest, CompletionsAndEmbeddingsRoutes) {
  const auto completion =
      post("/openai/deployments/gpt-4o/completions?api-version=1", R"({"prompt":"hello","max_tokens":2})");
  ASSERT_EQ(completion.status, 200);
  EXPECT_EQ(json::parse(completion.body)["object"], "text_completion");
  EXPECT_EQ(json::parse(completion.body)["usage"]["completion_tokens"], 2);

  const auto embeddings = post("/v1/embeddings", R"({"model":"gpt-4o","input":["abcdefgh","x"]})");
  ASSERT_EQ(embeddings.status, 200);
  const auto body = json::parse(embeddings.body);
  EXPECT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 2);
}

TEST_F(SimEngineTest, OpenAIRouteUsesTheBodyModelAsDeployment) {
  const auto response = post("/v1/chat/completions", R"({"model":"small","messages":[{"content":"hi"}]})");
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(json::parse(response.body)["model"], "small");
  EXPECT_EQ(header(response, "x-ratelimit-limit-tokens"), "100");
}

TEST_F(SimEngineTest, AzureWithoutApiVersionIs400) {
  const auto response = post("/openai/deployments/small/chat/completions", kChatBody);
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(json::parse(response.body)["error"]["message"].get<std::string>().find("api-version"),
            std::string::npos);
}

TEST_F(SimEngineTest, UnknownDeploymentIs404DeploymentNotFound) {
  const auto azure = post("/openai/deployments/nope/chat/completions?api-version=1", kChatBody);
  EXPECT_EQ(azure.status, 404);
  EXPECT_EQ(json::parse(azure.body)["error"]["code"], "DeploymentNotFound");
  const auto openai = post("/v1/chat/completions", R"({"model":"nope","messages":[]})");
  EXPECT_EQ(openai.status, 404);
  EXPECT_EQ(json::parse(openai.body)["error"]["code"], "DeploymentNotFound");
}

TEST_F(SimEngineTest, UnknownPathIs404) {
  const auto response = post("/v2/whatever", "{}");
  EXPECT_EQ(response.status, 404);
  EXPECT_TRUE(json::parse(response.body).contains("error"));
}

TEST_F(SimEngineTest, GetOnApiRouteIs405) {
  const auto response = get(kChatPath);
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(header(response, "allow"), "POST");
}

TEST_F(SimEngineTest, BadBodiesAre400) {
  EXPECT_EQ(chat("{not json").status, 400);
  EXPECT_EQ(post("/v1/chat/completions", R"({"messages":[]})").status, 400);  // no model
}

TEST_F(SimEngineTest, WrongOrMissingKeyIs401) {
  const auto wrong = post(kChatPath, kChatBody, {{"api-key", "bad"}});
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(json::parse(wrong.body)["error"]["code"], "401");
  EXPECT_EQ(post(kChatPath, kChatBody, {}).status, 401);
  EXPECT_EQ(post(kChatPath, kChatBody, {{"Authorization", "Bearer bad"}}).status, 401);
}

TEST_F(SimEngineTest, KeyAcceptedAsApiKeyOrBearer) {
  EXPECT_EQ(post(kChatPath, kChatBody, {{"API-KEY", "k1"}}).status, 200);
  EXPECT_EQ(post(kChatPath, kChatBody, {{"authorization", "Bearer k1"}}).status, 200);
}

TEST_F(SimEngineTest, NoConfiguredKeyAcceptsAnything) {
  settings_.api_key.clear();
  EXPECT_EQ(post(kChatPath, kChatBody, {}).status, 200);
}

TEST_F(SimEngineTest, StreamRequestReturnsSsePlan) {
  const auto response = post(
      kChatPath, R"({"messages":[{"content":"hi"}],"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(response.status, 200);
  EXPECT_TRUE(response.stream);
  EXPECT_EQ(response.content_type, "text/event-stream");
  EXPECT_EQ(response.chunk_interval, 7ms);
  ASSERT_EQ(response.events.size(), 1u + 5u + 1u + 1u + 1u);
  EXPECT_NE(response.events[7].data.find("\"usage\":{"), std::string::npos);
  EXPECT_EQ(response.events.back().data, "data: [DONE]\n\n");
  EXPECT_EQ(header(response, "x-ratelimit-remaining-requests"), "9");
}

TEST_F(SimEngineTest, StreamChunksFlagSetsContentChunks) {
  settings_.stream_chunks = 2;
  const auto response = post(kChatPath, R"({"messages":[],"stream":true})");
  EXPECT_EQ(response.events.size(), 1u + 2u + 1u + 1u);
}

TEST_F(SimEngineTest, OverQuotaIs429WithRetryAfterAndRemainingHeaders) {
  // small: 100 tokens, 10 requests per 60 s; each chat costs 14 tokens.
  for (int i = 0; i < 7; ++i) ASSERT_EQ(chat().status, 200) << i;  // 98 tokens
  clock_.advance(12'300ms);
  const auto response = chat();
  ASSERT_EQ(response.status, 429);
  EXPECT_EQ(header(response, "retry-after"), "48");
  EXPECT_EQ(header(response, "retry-after-ms"), "47700");
  EXPECT_EQ(header(response, "x-ratelimit-remaining-tokens"), "2");
  EXPECT_EQ(header(response, "x-ratelimit-remaining-requests"), "3");
  const auto body = json::parse(response.body);
  EXPECT_EQ(body["error"]["code"], "429");
  const auto message = body["error"]["message"].get<std::string>();
  EXPECT_NE(message.find("ChatCompletions_Create Operation under Azure OpenAI API version "
                         "2024-02-01 have exceeded token rate limit"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Please retry after 48 seconds."), std::string::npos) << message;
}

TEST_F(SimEngineTest, RequestLimitGives429CallRateLimit) {
  for (int i = 0; i < 10; ++i) ASSERT_EQ(post(kChatPath, R"({"messages":[],"max_tokens":1})").status, 200);
  const auto response = post(kChatPath, R"({"messages":[],"max_tokens":1})");
  ASSERT_EQ(response.status, 429);
  EXPECT_NE(response.body.find("call rate limit"), std::string::npos);
  EXPECT_EQ(header(response, "x-ratelimit-remaining-requests"), "0");
}

TEST_F(SimEngineTest, QuotaRefillsInTheNextWindow) {
  for (int i = 0; i < 7; ++i) ASSERT_EQ(chat().status, 200);
  ASSERT_EQ(chat().status, 429);
  clock_.advance(60s);
  EXPECT_EQ(chat().status, 200);
}

TEST_F(SimEngineTest, LimitsScaleToTheWindow) {
  settings_.limiter.window = 1s;
  settings_.deployments = {{"small", {6'000, 600}}};  // 100 tokens / 10 requests per second
  const auto first = post(kChatPath, R"({"messages":[],"max_tokens":99})");  // cost 100
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(header(first, "x-ratelimit-limit-tokens"), "100");
  EXPECT_EQ(header(first, "x-ratelimit-remaining-tokens"), "0");
  clock_.advance(400ms);
  const auto limited = chat();
  ASSERT_EQ(limited.status, 429);
  EXPECT_EQ(header(limited, "retry-after-ms"), "600");
  EXPECT_EQ(header(limited, "retry-after"), "1");
  clock_.advance(600ms);
  EXPECT_EQ(chat().status, 200);
}

TEST_F(SimEngineTest, SlidingLimiterAnswersRetryAfterUntilTheOldestCostLeaves) {
  settings_.limiter.kind = LimiterKind::Sliding;
  settings_.limiter.window = 10s;
  settings_.deployments = {{"small", {600, 60}}};  // 100 tokens, 10 requests per 10 s
  ASSERT_EQ(chat().status, 200);                   // 14 tokens at +0 s
  clock_.advance(3s);
  for (int i = 0; i < 6; ++i) ASSERT_EQ(chat().status, 200) << i;  // 84 more at +3 s
  clock_.advance(1s);
  const auto limited = chat();
  ASSERT_EQ(limited.status, 429);
  EXPECT_EQ(header(limited, "retry-after-ms"), "6000");  // the 14 at +0 s leaves at +10 s
  EXPECT_EQ(header(limited, "retry-after"), "6");
  EXPECT_EQ(header(limited, "x-ratelimit-remaining-tokens"), "2");
  clock_.advance(5'999ms);
  EXPECT_EQ(chat().status, 429);
  clock_.advance(1ms);
  const auto admitted = chat();
  ASSERT_EQ(admitted.status, 200);
  EXPECT_EQ(header(admitted, "x-ratelimit-remaining-tokens"), "2");  // the +3 s ones still count
}

TEST_F(SimEngineTest, BucketLimiterRefillsContinuously) {
  settings_.limiter.kind = LimiterKind::Bucket;
  settings_.limiter.window = 1s;
  settings_.limiter.burst = 1s;
  settings_.deployments = {{"small", {6'000, 600}}};                         // 100 tokens/s, holds 100
  const auto first = post(kChatPath, R"({"messages":[],"max_tokens":99})");  // cost 100
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(header(first, "x-ratelimit-limit-tokens"), "100");
  EXPECT_EQ(header(first, "x-ratelimit-remaining-tokens"), "0");
  clock_.advance(100ms);
  const auto limited = chat();  // cost 14, 10 in the bucket
  ASSERT_EQ(limited.status, 429);
  EXPECT_EQ(header(limited, "x-ratelimit-remaining-tokens"), "10");
  EXPECT_EQ(header(limited, "retry-after-ms"), "40");
  EXPECT_EQ(header(limited, "retry-after"), "1");
  clock_.advance(40ms);
  const auto admitted = chat();
  ASSERT_EQ(admitted.status, 200);
  EXPECT_EQ(header(admitted, "x-ratelimit-remaining-tokens"), "0");
}

TEST_F(SimEngineTest, RpmIntervalLimitsRequestsPerSubInterval) {
  settings_.limiter.kind = LimiterKind::Fixed;
  settings_.limiter.window = 60s;
  settings_.limiter.rpm_interval = 1s;
  settings_.deployments = {{"small", {1'000'000, 600}}};  // 10 requests per second
  for (int i = 0; i < 10; ++i) ASSERT_EQ(chat().status, 200) << i;
  clock_.advance(250ms);
  const auto limited = chat();
  ASSERT_EQ(limited.status, 429);
  EXPECT_NE(limited.body.find("call rate limit"), std::string::npos);
  EXPECT_EQ(header(limited, "x-ratelimit-limit-requests"), "10");
  EXPECT_EQ(header(limited, "x-ratelimit-remaining-requests"), "0");
  EXPECT_EQ(header(limited, "retry-after-ms"), "750");
  clock_.advance(750ms);
  EXPECT_EQ(chat().status, 200);
}

TEST_F(SimEngineTest, ReportJitterAndUnknownUseTheInjectedDraws) {
  settings_.reports = {.jitter = 0.5, .unknown_rate = 0.1};
  draws_ = {0.5, 0.0, 0.75};  // known; requests x 0.5, tokens x 1.25
  const auto jittered = chat();
  ASSERT_EQ(jittered.status, 200);
  EXPECT_EQ(header(jittered, "x-ratelimit-remaining-requests"), "5");  // 9 x 0.5 = 4.5
  EXPECT_EQ(header(jittered, "x-ratelimit-remaining-tokens"), "108");  // 86 x 1.25 = 107.5
  EXPECT_EQ(header(jittered, "x-ratelimit-limit-tokens"), "100");
  draws_ = {0.05};  // unknown
  const auto unknown = chat();
  ASSERT_EQ(unknown.status, 200);
  EXPECT_EQ(header(unknown, "x-ratelimit-remaining-requests"), "-1");
  EXPECT_EQ(header(unknown, "x-ratelimit-remaining-tokens"), "-1");
  EXPECT_EQ(header(unknown, "x-ratelimit-limit-requests"), "-1");
  EXPECT_EQ(header(unknown, "x-ratelimit-limit-tokens"), "-1");
  EXPECT_TRUE(draws_.empty());
}

TEST_F(SimEngineTest, A429CanReportUnknownToo) {
  settings_.reports.unknown_rate = 1.0;
  for (int i = 0; i < 7; ++i) ASSERT_EQ(chat().status, 200) << i;
  const auto limited = chat();
  ASSERT_EQ(limited.status, 429);
  EXPECT_EQ(header(limited, "x-ratelimit-remaining-tokens"), "-1");
  EXPECT_EQ(header(limited, "x-ratelimit-limit-tokens"), "-1");
  EXPECT_NE(header(limited, "retry-after-ms"), "<absent>");  // the 429 still says when
}

TEST_F(SimEngineTest, ExactReportsDrawNothing) {
  draws_ = {0.0};
  ASSERT_EQ(chat().status, 200);
  EXPECT_EQ(draws_.size(), 1u);
}

TEST_F(SimEngineTest, QuotasAreIndependentPerDeployment) {
  for (int i = 0; i < 7; ++i) ASSERT_EQ(chat().status, 200);
  ASSERT_EQ(chat().status, 429);
  EXPECT_EQ(post("/openai/deployments/gpt-4o/chat/completions?api-version=1", kChatBody).status, 200);
}

TEST_F(SimEngineTest, LatencyAppliesToEveryApiAnswer) {
  set_faults(R"({"latency_ms":250})");
  EXPECT_EQ(chat().latency, 250ms);
  EXPECT_EQ(post(kChatPath, kChatBody, {}).latency, 250ms);  // 401 too
  EXPECT_EQ(get("/_sim/stats").latency, 0ms);                // control endpoints never wait
}

TEST_F(SimEngineTest, ErrorRateUsesRandomDraws) {
  set_faults(R"({"error_rate":0.5,"error_status":503})");
  draws_ = {0.1, 0.9, 0.49};
  const auto first = chat();
  EXPECT_EQ(first.status, 503);
  EXPECT_EQ(json::parse(first.body)["error"]["code"], "503");
  EXPECT_EQ(header(first, "x-ratelimit-remaining-tokens"), "100");  // faults charge no quota
  EXPECT_EQ(chat().status, 200);
  EXPECT_EQ(chat().status, 503);
}

TEST_F(SimEngineTest, ForcedStatus429CarriesRetryAfterAndChargesNothing) {
  set_faults(R"({"force_status":429,"force_retry_after_ms":2500,"force_count":1})");
  const auto forced = chat();
  ASSERT_EQ(forced.status, 429);
  EXPECT_EQ(header(forced, "retry-after"), "3");
  EXPECT_EQ(header(forced, "retry-after-ms"), "2500");
  EXPECT_EQ(header(forced, "x-ratelimit-remaining-requests"), "10");
  EXPECT_EQ(json::parse(forced.body)["error"]["code"], "429");
  EXPECT_EQ(chat().status, 200);  // force_count exhausted
}

TEST_F(SimEngineTest, ForcedStatusStillNeedsAValidKey) {
  set_faults(R"({"force_status":500})");
  EXPECT_EQ(post(kChatPath, kChatBody, {{"api-key", "bad"}}).status, 401);
  EXPECT_EQ(chat().status, 500);
}

TEST_F(SimEngineTest, StallAndResetArePlannedForSuccessfulAnswersOnly) {
  set_faults(R"({"stall_ms":300,"stall_after_chunks":2,"reset_after_chunks":4})");
  const auto ok = post(kChatPath, R"({"messages":[],"stream":true})");
  EXPECT_EQ(ok.stall, 300ms);
  EXPECT_FALSE(ok.stall_before_headers);
  EXPECT_EQ(ok.stall_after_events, 2);
  ASSERT_TRUE(ok.reset_after_events);
  EXPECT_EQ(*ok.reset_after_events, 4);
  const auto unauthorized = post(kChatPath, kChatBody, {});
  EXPECT_EQ(unauthorized.stall, 0ms);
  EXPECT_FALSE(unauthorized.reset_after_events);
}

TEST_F(SimEngineTest, ATrickleSpacesAStreamsEventsOnly) {
  set_faults(R"({"trickle_ms":250})");
  EXPECT_EQ(post(kChatPath, R"({"messages":[],"stream":true})").chunk_interval, 250ms);
  EXPECT_EQ(chat().chunk_interval, 0ms) << "a whole answer is not paced";
}

TEST_F(SimEngineTest, NoResetPlannedByDefault) {
  const auto ok = chat();
  EXPECT_FALSE(ok.reset_after_events);
  EXPECT_FALSE(ok.reset_before_headers);
}

TEST_F(SimEngineTest, ResetRateCutsStreamsMidStreamAndOthersBeforeTheHeaders) {
  set_faults(R"({"reset_rate":0.05})");
  draws_ = {0.01, 0.5, 0.04};
  const auto cut = post(kChatPath, R"({"messages":[],"stream":true})");
  ASSERT_TRUE(cut.reset_after_events);
  EXPECT_EQ(*cut.reset_after_events, static_cast<int>(cut.events.size()) / 2);
  EXPECT_GT(*cut.reset_after_events, 0);
  EXPECT_FALSE(cut.reset_before_headers);
  const auto whole = post(kChatPath, R"({"messages":[],"stream":true})");
  EXPECT_FALSE(whole.reset_after_events);
  const auto plain = chat();
  EXPECT_EQ(plain.status, 200);
  EXPECT_TRUE(plain.reset_before_headers);
}

TEST_F(SimEngineTest, ResetRateKeepsAnEarlierResetAfterChunks) {
  set_faults(R"({"reset_rate":1,"reset_after_chunks":1})");
  const auto cut = post(kChatPath, R"({"messages":[],"stream":true})");
  ASSERT_TRUE(cut.reset_after_events);
  EXPECT_EQ(*cut.reset_after_events, 1);
}

TEST_F(SimEngineTest, FaultsFromSettingsApplyAtStart) {
  settings_.faults.force_status = 503;
  EXPECT_EQ(chat().status, 503);
}

TEST_F(SimEngineTest, FaultsEndpointGetAndMergingPost) {
  const auto initial = get("/_sim/faults");
  ASSERT_EQ(initial.status, 200);
  EXPECT_EQ(json::parse(initial.body), faults_to_json(FaultConfig{}));
  set_faults(R"({"latency_ms":5})");
  const auto merged = post("/_sim/faults", R"({"error_rate":0.25})", {});
  ASSERT_EQ(merged.status, 200);
  EXPECT_EQ(json::parse(merged.body)["latency_ms"], 5);
  EXPECT_EQ(json::parse(merged.body)["error_rate"], 0.25);
  EXPECT_EQ(engine().faults().latency_ms, 5);
}

TEST_F(SimEngineTest, FaultsEndpointRejectsBadPatches) {
  EXPECT_EQ(post("/_sim/faults", R"({"latency":5})", {}).status, 400);
  EXPECT_EQ(post("/_sim/faults", "{", {}).status, 400);
  EXPECT_EQ(engine().handle({"DELETE", "/_sim/faults", {}, ""}).status, 405);
  EXPECT_EQ(engine().faults(), FaultConfig{});
}

TEST_F(SimEngineTest, StatsCountAnswersTokensAndLastRequest) {
  ASSERT_EQ(chat().status, 200);
  ASSERT_EQ(post(kChatPath, kChatBody, {{"api-key", "bad"}, {"X-Trace", "t1"}}).status, 401);
  ASSERT_EQ(post("/v1/embeddings", R"({"model":"gpt-4o","input":"abcdefgh"})").status, 200);
  ASSERT_EQ(post(kChatPath, kChatBody, {{"api-key", "k1"}, {"X-Trace", "t2"}}).status, 200);
  const auto response = get("/_sim/stats");
  ASSERT_EQ(response.status, 200);
  const auto stats = json::parse(response.body);
  EXPECT_EQ(stats, engine().stats_json());
  EXPECT_EQ(stats["name"], "eastus");
  EXPECT_EQ(stats["requests"], 4);
  EXPECT_EQ(stats["by_status"], (json{{"200", 3}, {"401", 1}}));
  EXPECT_EQ(stats["tokens_served"], 9 + 2 + 9);
  EXPECT_EQ(stats["tokens_charged"], 14 + 2 + 14);
  EXPECT_EQ(stats["deployments"]["small"]["requests"], 2);  // the 401 matched no deployment
  EXPECT_EQ(stats["deployments"]["gpt-4o"]["tokens_served"], 2);
  EXPECT_EQ(stats["last_request_path"], kChatPath);
  EXPECT_EQ(stats["last_request_headers"]["api-key"], "k1");
  EXPECT_EQ(stats["last_request_headers"]["x-trace"], "t2");
  EXPECT_EQ(stats["last_request_body"], kChatBody);
}

TEST_F(SimEngineTest, StatsDescribeTheLimiterAndEachDeploymentsCapacity) {
  settings_.limiter.kind = LimiterKind::Bucket;
  settings_.limiter.window = 10s;
  settings_.limiter.burst = 2s;
  settings_.limiter.rpm_interval = 1s;
  settings_.reports = {.jitter = 0.25, .unknown_rate = 0.5};
  settings_.deployments = {{"small", {6'000, 600}}};  // 1000 tokens per 10 s: 100/s, holds 200
  const auto stats = engine().stats_json();
  EXPECT_EQ(stats["limiter"], (json{{"kind", "bucket"},
                                    {"window_seconds", 10.0},
                                    {"burst_seconds", 2.0},
                                    {"rpm_interval_seconds", 1.0},
                                    {"report_jitter", 0.25},
                                    {"report_unknown_rate", 0.5}}));
  EXPECT_EQ(stats["capacity"]["small"], (json{{"limit_tokens", 200},
                                              {"limit_requests", 10},
                                              {"tokens_per_second", 100.0},
                                              {"burst_tokens", 200}}));
}

TEST_F(SimEngineTest, StatsOfWindowsHaveNoBurstAndNoRpmInterval) {
  settings_.limiter.window = 1s;
  settings_.deployments = {{"small", {60'000, 600}}};
  const auto stats = engine().stats_json();
  EXPECT_EQ(stats["limiter"]["kind"], "fixed");
  EXPECT_TRUE(stats["limiter"]["rpm_interval_seconds"].is_null());
  EXPECT_EQ(stats["capacity"]["small"]["limit_tokens"], 1'000);
  EXPECT_EQ(stats["capacity"]["small"]["tokens_per_second"], 1'000.0);
  EXPECT_EQ(stats["capacity"]["small"]["burst_tokens"], 0);
}

TEST_F(SimEngineTest, ControlRequestsAreNotCounted) {
  get("/_sim/stats");
  get("/_sim/faults");
  EXPECT_EQ(engine().stats_json()["requests"], 0);
  EXPECT_EQ(post("/_sim/stats", "", {}).status, 405);
}

TEST_F(SimEngineTest, ResetClearsStatsQuotaAndRuntimeFaults) {
  settings_.faults.latency_ms = 3;  // a command-line fault survives reset
  for (int i = 0; i < 7; ++i) ASSERT_EQ(chat().status, 200);
  ASSERT_EQ(chat().status, 429);
  set_faults(R"({"error_rate":1})");
  const auto reset = post("/_sim/reset", "", {});
  ASSERT_EQ(reset.status, 200);
  EXPECT_EQ(header(reset, "x-sim-name"), "eastus");
  EXPECT_EQ(engine().stats_json()["requests"], 0);
  EXPECT_EQ(engine().faults().error_rate, 0.0);
  EXPECT_EQ(engine().faults().latency_ms, 3);
  EXPECT_EQ(chat().status, 200);
  EXPECT_EQ(get("/_sim/reset").status, 405);
}

TEST_F(SimEngineTest, ResetRestartsASlidingWindowAtNow) {
  settings_.limiter.kind = LimiterKind::Sliding;
  settings_.limiter.window = 60s;
  for (int i = 0; i < 7; ++i) ASSERT_EQ(chat().status, 200);
  clock_.advance(30s);
  ASSERT_EQ(chat().status, 429);
  ASSERT_EQ(post("/_sim/reset", "", {}).status, 200);
  const auto after = chat();
  ASSERT_EQ(after.status, 200);
  EXPECT_EQ(header(after, "x-ratelimit-remaining-tokens"), "86");
}

}  // namespace sim_engine_test
}  // namespace smartlb::sim
