#include "smartlb/cost/request_cost.hpp"

#include <gtest/gtest.h>

#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb {
namespace request_cost_test {  // named, not anonymous: tests/CMakeLists.txt

// Azure OpenAI's global-deployment prices in USD per 1M tokens (input, cached input, output),
// in pico-units per token: $2.50 / 1M = 2'500'000 pico-USD a token.
const cost::ModelPrice kGpt4o{"gpt-4o", {"chat-eastus"}, 2'500'000, 1'250'000, 10'000'000};
const cost::ModelPrice kGpt4oMini{"gpt-4o-mini", {}, 150'000, 75'000, 600'000};
const cost::ModelPrice kEmbedding{"text-embedding-3-small", {}, 20'000, 20'000, 0};

cost::BilledTokens billed(std::string_view answer) {
  const telemetry::TokenUsage u = telemetry::parse_usage_json(answer);
  return {u.prompt_tokens, u.cached_tokens, u.completion_tokens};
}

TEST(RequestCost, ChatWithCachedPromptMatchesHandCalculation) {
  // A chat completion (gpt-4o-2024-08-06) whose prompt was mostly read from the cache.
  const char* answer =
      R"({"id":"chatcmpl-AX1","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[],)"
      R"("usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,)"
      R"("prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},)"
      R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}}})";
  // (2006 - 1920) x $2.50/1M + 1920 x $1.25/1M + 300 x $10/1M
  //   = $0.000215 + $0.0024 + $0.003 = $0.005615
  EXPECT_EQ(cost_of(billed(answer), kGpt4o), 5'615'000'000);
  EXPECT_EQ(cost::format_money(*cost_of(billed(answer), kGpt4o)), "0.005615");
}

TEST(RequestCost, ResponsesWithCachedInputMatchesHandCalculation) {
  // A Responses API stream's last event.
  const char* event =
      R"({"type":"response.completed","sequence_number":42,"response":{"id":"resp_67c","model":"gpt-4o-mini",)"
      R"("status":"completed","usage":{"input_tokens":1500,"input_tokens_details":{"cached_tokens":1024},)"
      R"("output_tokens":40,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1540}}})";
  // (1500 - 1024) x $0.15/1M + 1024 x $0.075/1M + 40 x $0.60/1M
  //   = $0.0000714 + $0.0000768 + $0.000024 = $0.0001722
  EXPECT_EQ(cost_of(billed(event), kGpt4oMini), 172'200'000);
}

TEST(RequestCost, StreamUsageWithoutDetailsIsAllAtTheInputPrice) {
  // The last chunk of a chat stream with stream_options.include_usage.
  const char* chunk = R"({"id":"chatcmpl-AX2","object":"chat.completion.chunk","choices":[],)"
                      R"("usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}})";
  // 9 x $2.50/1M + 2 x $10/1M = $0.0000225 + $0.00002 = $0.0000425
  EXPECT_EQ(cost_of(billed(chunk), kGpt4o), 42'500'000);
}

TEST(RequestCost, EmbeddingsHaveNoOutput) {
  const char* answer = R"({"object":"list","data":[],"model":"text-embedding-3-small",)"
                       R"("usage":{"prompt_tokens":8,"total_tokens":8}})";
  // 8 x $0.02/1M = $0.00000016
  EXPECT_EQ(cost_of(billed(answer), kEmbedding), 160'000);
}

TEST(RequestCost, NoUsageIsNoCost) {
  EXPECT_EQ(cost_of(billed(R"({"id":"x","choices":[]})"), kGpt4o), std::nullopt);
  EXPECT_EQ(cost_of(cost::BilledTokens{}, kGpt4o), std::nullopt);
}

TEST(RequestCost, CachedTokensAreNeverMoreThanTheInput) {
  // A report that says more were cached than were sent is taken as all of them cached.
  EXPECT_EQ(cost_of(cost::BilledTokens{10, 50, 0}, kGpt4o), 10 * 1'250'000);
}

TEST(RequestCost, HugeCountsSaturateInsteadOfOverflowing) {
  const cost::ModelPrice dear{
      "dear", {}, cost::kMaxPricePerToken, cost::kMaxPricePerToken, cost::kMaxPricePerToken};
  EXPECT_EQ(cost_of(cost::BilledTokens{INT64_MAX, -1, INT64_MAX}, dear), cost::kMaxMoney);
  EXPECT_EQ(cost_estimate(INT64_MAX, INT64_MAX, dear), cost::kMaxMoney);
}

TEST(CostEstimate, InputAtTheInputPriceAndMaxOutputAtTheOutputPrice) {
  // 1000 x $2.50/1M + 256 x $10/1M = $0.0025 + $0.00256 = $0.00506
  EXPECT_EQ(cost_estimate(1000, 256, kGpt4o), 5'060'000'000);
}

TEST(PriceTable, FindsAModelByNameAliasOrUndatedVersion) {
  const cost::PriceTable table{"USD", {kGpt4o, kGpt4oMini}};
  EXPECT_EQ(table.find("gpt-4o"), &table.models[0]);
  EXPECT_EQ(table.find("chat-eastus"), &table.models[0]);
  EXPECT_EQ(table.find("gpt-4o-2024-08-06"), &table.models[0]);
  EXPECT_EQ(table.find("gpt-4o-mini-2024-07-18"), &table.models[1]);
  EXPECT_EQ(table.find("gpt-4o-0513"), &table.models[0]);
  EXPECT_EQ(table.find("gpt-4"), nullptr);
  EXPECT_EQ(table.find("GPT-4o"), nullptr) << "names match exactly, as everywhere in the config";
  EXPECT_EQ(table.find("gpt-4o-preview"), nullptr);
  EXPECT_EQ(table.find(""), nullptr);
}

TEST(PriceTable, ADatedEntryWinsOverItsModel) {
  cost::ModelPrice dated = kGpt4o;
  dated.model = "gpt-4o-2024-05-13";
  dated.aliases.clear();
  dated.input = 5'000'000;
  const cost::PriceTable table{"USD", {kGpt4o, dated}};
  EXPECT_EQ(table.find("gpt-4o-2024-05-13"), &table.models[1]);
  EXPECT_EQ(table.find("gpt-4o-2024-11-20"), &table.models[0]);
}

TEST(VersionDate, OnlyADateAtTheEndIsTakenOff) {
  EXPECT_EQ(cost::without_version_date("gpt-4o-2024-08-06"), "gpt-4o");
  EXPECT_EQ(cost::without_version_date("gpt-35-turbo-0125"), "gpt-35-turbo");
  EXPECT_EQ(cost::without_version_date("gpt-4-1106-preview"), "gpt-4-1106-preview");
  EXPECT_EQ(cost::without_version_date("o3-mini"), "o3-mini");
  EXPECT_EQ(cost::without_version_date("2024-08-06"), "2024-08-06");
  EXPECT_EQ(cost::without_version_date("-0125"), "-0125");
}

}  // namespace request_cost_test
}  // namespace smartlb
