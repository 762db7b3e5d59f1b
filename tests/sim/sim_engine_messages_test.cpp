// Anthropic's Messages API in the engine: checks, bodies, quota headers, faults and stats.

#include "engine_test_fixture.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_engine_messages_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;
using test::header;

constexpr const char* kMessages = "/v1/messages";
constexpr const char* kCountTokens = "/v1/messages/count_tokens";
// input 16 bytes = 4 tokens; cost 4 + 10 = 14 of claude's 100.
constexpr const char* kBody =
    R"({"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"0123456789abcdef"}]})";
constexpr const char* kStreamBody =
    R"({"model":"claude","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"0123456789abcdef"}]})";
const HeaderList kAnthropic{{"x-api-key", "k1"}, {"anthropic-version", "2023-06-01"}};

class SimEngineMessagesTest : public test::EngineTest {
 protected:
  SimResponse create(std::string body = kBody, HeaderList headers = kAnthropic) {
    return post(kMessages, std::move(body), std::move(headers));
  }
  static json error_of(const SimResponse& response) { return json::parse(response.body); }
};

TEST_F(SimEngineMessagesTest, CreateAnswersAMessageWithUsageAndAnthropicsHeaders) {
  const auto response = create();
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_FALSE(response.stream);
  const auto body = json::parse(response.body);
  EXPECT_TRUE(body["id"].get<std::string>().starts_with("msg_")) << body["id"];
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["role"], "assistant");
  EXPECT_EQ(body["model"], "claude");
  EXPECT_EQ(body["content"], json::parse(R"([{"type":"text","text":"This is a simulated answer"}])"));
  EXPECT_EQ(body["stop_reason"], "end_turn");
  EXPECT_TRUE(body["stop_sequence"].is_null());
  EXPECT_EQ(body["usage"], json::parse(R"({"input_tokens":4,"output_tokens":5,"cache_creation_input_tokens":0,
                                           "cache_read_input_tokens":0})"));
  EXPECT_EQ(header(response, "anthropic-ratelimit-requests-limit"), "10");
  EXPECT_EQ(header(response, "anthropic-ratelimit-requests-remaining"), "9");
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-limit"), "100");
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-remaining"), "86");
  EXPECT_EQ(header(response, "anthropic-ratelimit-input-tokens-remaining"), "86");
  EXPECT_EQ(header(response, "anthropic-ratelimit-output-tokens-remaining"), "86");
  // The fixed window that began at the start ends 60 s later: then the limits are whole.
  EXPECT_EQ(header(response, "anthropic-ratelimit-requests-reset"), "2023-11-14T22:14:20Z");
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-reset"), "2023-11-14T22:14:20Z");
  EXPECT_EQ(header(response, "anthropic-ratelimit-output-tokens-reset"), "2023-11-14T22:14:20Z");
  EXPECT_TRUE(header(response, "request-id").starts_with("req_")) << header(response, "request-id");
  EXPECT_EQ(header(response, "x-ratelimit-remaining-tokens"), "<absent>");  // OpenAI's are not sent
  EXPECT_EQ(header(response, "x-sim-name"), "eastus");
}

TEST_F(SimEngineMessagesTest, MaxTokensCapsTheOutput) {
  const auto response = create(R"({"model":"claude","max_tokens":2,"messages":[]})");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(json::parse(response.body)["usage"]["output_tokens"], 2);
  EXPECT_EQ(json::parse(response.body)["content"][0]["text"], "This is");
}

TEST_F(SimEngineMessagesTest, FoundrysPrefixAndEveryKeyHeaderAreAccepted) {
  for (const auto& key : {std::pair<std::string, std::string>{"x-api-key", "k1"},
                          {"api-key", "k1"},
                          {"Authorization", "Bearer k1"}}) {
    const auto response =
        post("/anthropic/v1/messages", kBody, {{key.first, key.second}, {"anthropic-version", "2023-06-01"}});
    EXPECT_EQ(response.status, 200) << key.first << ": " << response.body;
  }
}

TEST_F(SimEngineMessagesTest, WrongOrMissingKeyIs401AuthenticationError) {
  for (const HeaderList& headers :
       {HeaderList{{"anthropic-version", "2023-06-01"}},
        HeaderList{{"x-api-key", "bad"}, {"anthropic-version", "2023-06-01"}},
        HeaderList{{"Authorization", "Bearer bad"}, {"anthropic-version", "2023-06-01"}}}) {
    const auto response = create(kBody, headers);
    EXPECT_EQ(response.status, 401);
    EXPECT_EQ(error_of(response)["type"], "error");
    EXPECT_EQ(error_of(response)["error"]["type"], "authentication_error");
    EXPECT_TRUE(header(response, "request-id").starts_with("req_"));
  }
}

TEST_F(SimEngineMessagesTest, NoConfiguredKeyAcceptsAnything) {
  settings_.api_key.clear();
  EXPECT_EQ(create(kBody, {{"anthropic-version", "2023-06-01"}}).status, 200);
}

TEST_F(SimEngineMessagesTest, MissingAnthropicVersionIs400) {
  const auto response = create(kBody, {{"x-api-key", "k1"}});
  ASSERT_EQ(response.status, 400);
  EXPECT_EQ(error_of(response)["error"]["type"], "invalid_request_error");
  EXPECT_NE(error_of(response)["error"]["message"].get<std::string>().find("anthropic-version"),
            std::string::npos);
}

TEST_F(SimEngineMessagesTest, BadBodiesAre400InvalidRequestError) {
  const auto no_max_tokens = create(R"({"model":"claude","messages":[]})");
  ASSERT_EQ(no_max_tokens.status, 400);
  EXPECT_EQ(error_of(no_max_tokens)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(error_of(no_max_tokens)["error"]["message"], "max_tokens: Field required");
  EXPECT_EQ(create(R"({"model":"claude","max_tokens":5})").status, 400);  // no messages
  EXPECT_EQ(create("{not json").status, 400);
}

TEST_F(SimEngineMessagesTest, UnknownModelIs404NotFoundError) {
  const auto response = create(R"({"model":"claude-nope","max_tokens":5,"messages":[]})");
  ASSERT_EQ(response.status, 404);
  EXPECT_EQ(error_of(response)["type"], "error");
  EXPECT_EQ(error_of(response)["error"]["type"], "not_found_error");
  EXPECT_NE(error_of(response)["error"]["message"].get<std::string>().find("claude-nope"), std::string::npos);
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-limit"), "<absent>");  // no deployment to report
}

TEST_F(SimEngineMessagesTest, OnlyPostIsAllowed) {
  const auto response = send("GET", kMessages, "", kAnthropic);
  ASSERT_EQ(response.status, 405);
  EXPECT_EQ(header(response, "allow"), "POST");
  EXPECT_EQ(error_of(response)["error"]["type"], "invalid_request_error");
}

TEST_F(SimEngineMessagesTest, StreamPlansAnthropicsEventsPacedLikeTheOtherStreams) {
  const auto response = create(kStreamBody);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_TRUE(response.stream);
  EXPECT_EQ(response.content_type, "text/event-stream");
  EXPECT_EQ(response.chunk_interval, 7ms);
  std::vector<std::string> names;
  int content = 0;
  for (const auto& event : response.events) {
    names.push_back(event.data.substr(7, event.data.find('\n') - 7));
    content += event.is_content ? 1 : 0;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "message_start", "content_block_start", "ping", "content_block_delta",
                       "content_block_delta", "content_block_delta", "content_block_delta",
                       "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(content, 5);
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-remaining"), "86");
}

TEST_F(SimEngineMessagesTest, StreamFaultsApplyAsToChatStreams) {
  set_faults(R"({"stall_ms":300,"stall_after_chunks":2,"reset_after_chunks":4})");
  const auto response = create(kStreamBody);
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.stall, 300ms);
  EXPECT_EQ(response.stall_after_events, 2);
  ASSERT_TRUE(response.reset_after_events);
  EXPECT_EQ(*response.reset_after_events, 4);
}

TEST_F(SimEngineMessagesTest, ResetRateCutsAMessagesStreamMidStream) {
  set_faults(R"({"reset_rate":1})");
  const auto response = create(kStreamBody);
  ASSERT_TRUE(response.reset_after_events);
  EXPECT_EQ(*response.reset_after_events, static_cast<int>(response.events.size()) / 2);
}

TEST_F(SimEngineMessagesTest, OverQuotaIs429RateLimitErrorWithRetryAfterInSeconds) {
  for (int i = 0; i < 7; ++i) ASSERT_EQ(create().status, 200) << i;  // 98 of 100 tokens
  clock_.advance(12'300ms);
  const auto response = create();
  ASSERT_EQ(response.status, 429);
  EXPECT_EQ(error_of(response)["type"], "error");
  EXPECT_EQ(error_of(response)["error"]["type"], "rate_limit_error");
  EXPECT_NE(error_of(response)["error"]["message"].get<std::string>().find("tokens"), std::string::npos);
  EXPECT_EQ(header(response, "retry-after"), "48");  // 47.7 s, rounded up
  EXPECT_EQ(header(response, "retry-after-ms"), "<absent>");
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-remaining"), "2");
  EXPECT_EQ(header(response, "anthropic-ratelimit-requests-remaining"), "3");
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-reset"), "2023-11-14T22:14:20Z");
  EXPECT_TRUE(header(response, "request-id").starts_with("req_"));
  clock_.advance(47'700ms);
  EXPECT_EQ(create().status, 200);
}

TEST_F(SimEngineMessagesTest, QuotaIsSharedWithTheOpenAIRoutesOfTheDeployment) {
  for (int i = 0; i < 7; ++i) ASSERT_EQ(create().status, 200) << i;
  const auto chat = post("/v1/chat/completions",
                         R"({"model":"claude","messages":[{"content":"0123456789abcdef"}],"max_tokens":10})");
  EXPECT_EQ(chat.status, 429);
}

TEST_F(SimEngineMessagesTest, Forced529IsOverloadedErrorAndChargesNothing) {
  set_faults(R"({"force_status":529,"force_count":1})");
  const auto response = create();
  ASSERT_EQ(response.status, 529);
  EXPECT_EQ(json::parse(response.body),
            json::parse(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
  EXPECT_EQ(header(response, "anthropic-ratelimit-tokens-remaining"), "100");
  EXPECT_EQ(create().status, 200);  // force_count spent
}

TEST_F(SimEngineMessagesTest, ForcedServerErrorsUseAnthropicsShape) {
  set_faults(R"({"force_status":500})");
  const auto internal = create();
  ASSERT_EQ(internal.status, 500);
  EXPECT_EQ(error_of(internal)["type"], "error");
  EXPECT_EQ(error_of(internal)["error"]["type"], "api_error");
  set_faults(R"({"force_status":503,"force_retry_after_ms":2500})");
  const auto unavailable = create();
  ASSERT_EQ(unavailable.status, 503);
  EXPECT_EQ(error_of(unavailable)["error"]["type"], "api_error");
  EXPECT_EQ(header(unavailable, "retry-after"), "3");
}

TEST_F(SimEngineMessagesTest, Forced429IsRateLimitErrorWithRetryAfter) {
  set_faults(R"({"force_status":429})");
  const auto response = create();
  ASSERT_EQ(response.status, 429);
  EXPECT_EQ(error_of(response)["error"]["type"], "rate_limit_error");
  EXPECT_EQ(header(response, "retry-after"), "1");
  EXPECT_EQ(header(response, "anthropic-ratelimit-requests-remaining"), "10");
}

TEST_F(SimEngineMessagesTest, ErrorRateUsesTheRandomDraws) {
  set_faults(R"({"error_rate":0.5,"error_status":529})");
  draws_ = {0.1, 0.9};
  EXPECT_EQ(create().status, 529);
  EXPECT_EQ(create().status, 200);
}

TEST_F(SimEngineMessagesTest, LatencyAppliesToMessagesAnswers) {
  set_faults(R"({"latency_ms":250})");
  EXPECT_EQ(create().latency, 250ms);
  EXPECT_EQ(create(kBody, {}).latency, 250ms);  // a 401 too
}

TEST_F(SimEngineMessagesTest, CountTokensAnswersInputTokensAndChargesNothing) {
  const auto counted =
      post(kCountTokens, R"({"model":"claude","messages":[{"role":"user","content":"0123456789abcdef"}],
                                              "system":"12345678"})",
           kAnthropic);
  ASSERT_EQ(counted.status, 200) << counted.body;
  EXPECT_EQ(json::parse(counted.body), json::parse(R"({"input_tokens":6})"));
  EXPECT_EQ(header(counted, "anthropic-ratelimit-tokens-remaining"), "100");
  EXPECT_EQ(header(counted, "anthropic-ratelimit-requests-remaining"), "10");
  EXPECT_TRUE(header(counted, "request-id").starts_with("req_"));
  EXPECT_EQ(header(create(), "anthropic-ratelimit-tokens-remaining"), "86");
  EXPECT_EQ(
      post("/anthropic/v1/messages/count_tokens", R"({"model":"claude","messages":[]})", kAnthropic).status,
      200);
  EXPECT_EQ(post(kCountTokens, R"({"model":"nope","messages":[]})", kAnthropic).status, 404);
}

TEST_F(SimEngineMessagesTest, StatsCountMessagesLikeOtherApiRequests) {
  ASSERT_EQ(create().status, 200);
  ASSERT_EQ(create(kStreamBody).status, 200);
  ASSERT_EQ(create(kBody, {}).status, 401);
  ASSERT_EQ(post(kCountTokens, R"({"model":"claude","messages":[]})", kAnthropic).status, 200);
  const auto stats = engine().stats_json();
  EXPECT_EQ(stats["requests"], 4);
  EXPECT_EQ(stats["by_status"], (json{{"200", 3}, {"401", 1}}));
  EXPECT_EQ(stats["tokens_served"], 2 * (4 + 5));
  EXPECT_EQ(stats["tokens_charged"], 2 * 14);
  EXPECT_EQ(stats["deployments"]["claude"]["requests"], 3);
  EXPECT_EQ(stats["last_request_path"], kCountTokens);
  EXPECT_EQ(stats["probes"], 0);
}

}  // namespace sim_engine_messages_test
}  // namespace smartlb::sim
