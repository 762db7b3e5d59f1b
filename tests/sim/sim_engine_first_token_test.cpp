// The first-token wait the engine plans: first_token_ms, growing with the prompt
// (first_token_ms_per_1k_prompt_tokens), plus a reasoning deployment's own wait.

#include "engine_test_fixture.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_engine_first_token_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;

// 4000 bytes of prompt: 1000 tokens.
const std::string kPrompt(4'000, 'x');
const HeaderList kAnthropic{{"x-api-key", "k1"}, {"anthropic-version", "2023-06-01"}};

json user_says(const std::string& text) { return json::array({json{{"role", "user"}, {"content", text}}}); }

class SimEngineFirstTokenTest : public test::EngineTest {
 protected:
  SimEngineFirstTokenTest() {
    settings_.deployments = {{"gpt-4o", {1'000'000'000, 1'000'000}},
                             {"o3", {1'000'000'000, 1'000'000}, std::chrono::milliseconds(2'500)}};
  }
  SimResponse chat(const std::string& model, bool stream = false) {
    return post("/v1/chat/completions",
                json{{"model", model}, {"messages", user_says(kPrompt)}, {"stream", stream}}.dump());
  }
};

TEST_F(SimEngineFirstTokenTest, NoWaitByDefault) {
  EXPECT_EQ(chat("gpt-4o").first_token, 0ms);
  EXPECT_EQ(chat("gpt-4o", true).first_token, 0ms);
}

TEST_F(SimEngineFirstTokenTest, TheWaitGrowsWithThePrompt) {
  set_faults(R"({"first_token_ms":100,"first_token_ms_per_1k_prompt_tokens":50})");
  EXPECT_EQ(chat("gpt-4o").first_token, 150ms);
  EXPECT_EQ(chat("gpt-4o", true).first_token, 150ms);
  EXPECT_EQ(post("/v1/chat/completions", R"({"model":"gpt-4o","messages":[]})").first_token, 100ms);
  EXPECT_EQ(
      post("/v1/completions", json{{"model", "gpt-4o"}, {"prompt", kPrompt + kPrompt}}.dump()).first_token,
      200ms);
}

TEST_F(SimEngineFirstTokenTest, EmbeddingsGenerateNothingAndDoNotWait) {
  set_faults(R"({"first_token_ms":100})");
  EXPECT_EQ(post("/v1/embeddings", R"({"model":"gpt-4o","input":"x"})").first_token, 0ms);
}

TEST_F(SimEngineFirstTokenTest, MessagesWaitForTheirInputTokens) {
  set_faults(R"({"first_token_ms":100,"first_token_ms_per_1k_prompt_tokens":50})");
  const auto body =
      json{{"model", "gpt-4o"}, {"max_tokens", 10}, {"system", kPrompt}, {"messages", user_says(kPrompt)}};
  EXPECT_EQ(post("/v1/messages", body.dump(), kAnthropic).first_token, 200ms);
  auto streamed = body;
  streamed["stream"] = true;
  EXPECT_EQ(post("/v1/messages", streamed.dump(), kAnthropic).first_token, 200ms);
  EXPECT_EQ(post("/v1/messages/count_tokens", body.dump(), kAnthropic).first_token,
            0ms);  // nothing generated
}

TEST_F(SimEngineFirstTokenTest, ResponsesCreateWaitsUnlessInTheBackground) {
  set_faults(R"({"first_token_ms":100,"first_token_ms_per_1k_prompt_tokens":50})");
  const auto body = json{{"model", "gpt-4o"}, {"input", kPrompt}};
  EXPECT_EQ(post("/v1/responses", body.dump()).first_token, 150ms);
  auto background = body;
  background["background"] = true;
  EXPECT_EQ(post("/v1/responses", background.dump()).first_token, 0ms);
}

TEST_F(SimEngineFirstTokenTest, AReasoningDeploymentWaitsOnTopOfTheFaults) {
  EXPECT_EQ(chat("o3", true).first_token, 2'500ms);
  EXPECT_EQ(chat("o3").first_token, 2'500ms);
  set_faults(R"({"first_token_ms":100})");
  EXPECT_EQ(chat("o3", true).first_token, 2'600ms);
  EXPECT_EQ(chat("gpt-4o", true).first_token, 100ms);
  EXPECT_EQ(post("/v1/messages", R"({"model":"o3","max_tokens":5,"messages":[]})", kAnthropic).first_token,
            2'600ms);
}

TEST_F(SimEngineFirstTokenTest, RefusedRequestsDoNotWait) {
  set_faults(R"({"first_token_ms":100})");
  EXPECT_EQ(post("/v1/chat/completions", R"({"model":"o3","messages":[]})", {}).first_token, 0ms);  // 401
  set_faults(R"({"force_status":503})");
  EXPECT_EQ(chat("o3").first_token, 0ms);
}

TEST_F(SimEngineFirstTokenTest, FaultsEndpointShowsTheSettingsAndResetRestoresTheFlags) {
  settings_.faults.first_token_ms = 5;
  set_faults(R"({"first_token_ms":100,"first_token_ms_per_1k_prompt_tokens":2.5})");
  const auto faults = json::parse(get("/_sim/faults").body);
  EXPECT_EQ(faults["first_token_ms"], 100);
  EXPECT_EQ(faults["first_token_ms_per_1k_prompt_tokens"], 2.5);
  ASSERT_EQ(post("/_sim/reset", "", {}).status, 200);
  EXPECT_EQ(engine().faults().first_token_ms, 5);
  EXPECT_EQ(engine().faults().first_token_ms_per_1k_prompt_tokens, 0.0);
}

}  // namespace sim_engine_first_token_test
}  // namespace smartlb::sim
