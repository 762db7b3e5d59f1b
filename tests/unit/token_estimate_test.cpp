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

TEST(TokenEstimate, TokenArraysCountFourCharactersATokenAndEscapesTheirDecodedLength) {
  EXPECT_EQ(estimate_request_tokens("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":5})"), 3 + 5);
  // "a\nb\u00e9" decodes to 5 bytes (a, newline, b, two for é): 2 tokens, not the 11 raw.
  EXPECT_EQ(estimate_request_tokens("/v1/completions", R"({"prompt":"a\nb\u00e9","max_tokens":1})"), 2 + 1);
}

TEST(TokenEstimate, OnlyTheOperationsOwnTopLevelValueCounts) {
  // "content" outside "messages", and a budget key below the top level, are not the request's.
  const std::string body =
      R"({"metadata":{"content":"xxxxxxxxxxxxxxxx"},"tools":[{"max_tokens":999}],)"
      R"("messages":[{"role":"user","content":"abcd","name":"zzzzzzzz"}],"max_output_tokens":9})";
  EXPECT_EQ(estimate_request_tokens("/v1/chat/completions", body), 1 + 9);
  EXPECT_EQ(estimate_request_tokens("/v1/responses", R"({"input":[{"role":"user","content":[{"type":"input_text","text":"abcdefgh"}]}],"max_output_tokens":3})"),
            2 + 3);
}

TEST(TokenEstimate, ANonObjectOrTruncatedBodyFallsBackToItsSize) {
  EXPECT_EQ(estimate_request_tokens("/v1/chat/completions", "[1,2,3,4]"), 3 + kDefaultMaxTokensEstimate);
  EXPECT_EQ(estimate_request_tokens("/v1/chat/completions", R"({"messages":[)"), 4 + kDefaultMaxTokensEstimate);
}

}  // namespace
}  // namespace smartlb
