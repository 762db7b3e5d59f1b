#include "smartlb/token_estimate.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

TEST(TokenEstimate, ChatCountsMessageTextPlusMaxTokens) {
  const std::string body = R"({"messages":[{"role":"system","content":"12345678"},{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url","image_url":{"url":"x"}}]}],"max_tokens":100})";
  EXPECT_EQ(estimate_request_tokens("/openai/deployments/d/chat/completions", body), 3 + 100);
}

TEST(TokenEstimate, DefaultCompletionBudget) {
  EXPECT_EQ(estimate_request_tokens("/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}]})"),
            1 + kDefaultMaxTokensEstimate);
  EXPECT_EQ(estimate_request_tokens("/v1/chat/completions", R"({"messages":[],"max_completion_tokens":7})"), 1 + 7);
}

TEST(TokenEstimate, EmbeddingsHaveNoCompletion) {
  EXPECT_EQ(estimate_request_tokens("/openai/deployments/e/embeddings", R"({"input":["abcdefgh","abcd"]})"), 3);
}

TEST(TokenEstimate, RoundsUpSoItNeverUndercountsTheBackend) {
  EXPECT_EQ(estimate_request_tokens("/v1/completions", R"({"prompt":"abcde","max_tokens":1})"), 2 + 1);
}

TEST(TokenEstimate, UnparseableBodyFallsBackToItsSize) {
  EXPECT_EQ(estimate_request_tokens("/v1/chat/completions", "not json at all!"), 4 + kDefaultMaxTokensEstimate);
}

}  // namespace
}  // namespace smartlb
