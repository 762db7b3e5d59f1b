#include "smartlb/sim/batch_run.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace batch_run_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;

constexpr const char* kChatLine =
    R"({"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"max_tokens":2}})";

TEST(BatchEndpoint, NormalisesToTheV1Form) {
  EXPECT_EQ(batch_endpoint("/v1/chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(batch_endpoint("/chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(batch_endpoint("/v1/responses"), "/v1/responses");
  EXPECT_EQ(batch_endpoint("/embeddings"), "/v1/embeddings");
  EXPECT_FALSE(batch_endpoint("/v1/files"));
  EXPECT_FALSE(batch_endpoint(""));
}

TEST(ValidateBatchInput, CountsRequestsSkippingBlankLines) {
  const std::string input = std::string(kChatLine) + "\r\n\n   \n" + kChatLine + "\n";
  const auto validation = validate_batch_input(input, "/v1/chat/completions");
  EXPECT_EQ(validation.requests, 2);
  EXPECT_TRUE(validation.errors.empty());
}

TEST(ValidateBatchInput, NamesEachBadLine) {
  const std::string input = std::string(kChatLine) + "\nnot json\n" +
                            R"({"method":"POST","url":"/v1/chat/completions","body":{}})" + "\n" +
                            R"({"custom_id":"x","method":"GET","url":"/v1/chat/completions","body":{}})" +
                            "\n" + R"({"custom_id":"x","method":"POST","url":"/v1/embeddings","body":{}})" +
                            "\n" + R"({"custom_id":"x","method":"POST","url":"/chat/completions","body":[]})";
  const auto validation = validate_batch_input(input, "/v1/chat/completions");
  EXPECT_EQ(validation.requests, 6);
  ASSERT_EQ(validation.errors.size(), 5u);
  const std::vector<std::pair<std::string, std::int64_t>> expected{{"invalid_json_line", 2},
                                                                   {"missing_custom_id", 3},
                                                                   {"invalid_method", 4},
                                                                   {"mismatched_url", 5},
                                                                   {"invalid_body", 6}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(validation.errors[i].code, expected[i].first);
    EXPECT_EQ(validation.errors[i].line, expected[i].second);
  }
  EXPECT_EQ(validate_batch_input(input, "/v1/chat/completions", 2).errors.size(), 2u);
}

TEST(RunBatch, OneAnswerPerRequestInInputOrder) {
  IdMinter ids(3);
  const std::string input =
      std::string(kChatLine) + "\n" +
      R"({"custom_id":"r2","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[]}})";
  const std::string output =
      run_batch(input, "/v1/chat/completions", BatchGeneration{5, 16}, ids, 1'700'000'000);
  std::vector<json> lines;
  for (std::size_t start = 0; start < output.size();) {
    const auto end = output.find('\n', start);
    lines.push_back(json::parse(output.substr(start, end - start)));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["custom_id"], "r1");
  EXPECT_EQ(lines[1]["custom_id"], "r2");
  EXPECT_TRUE(lines[0]["id"].get<std::string>().starts_with("batch_req_"));
  EXPECT_TRUE(lines[0]["error"].is_null());
  EXPECT_EQ(lines[0]["response"]["status_code"], 200);
  const json& body = lines[0]["response"]["body"];
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "gpt-4o");
  EXPECT_EQ(body["usage"]["completion_tokens"], 2) << "max_tokens of the line";
  EXPECT_EQ(lines[1]["response"]["body"]["usage"]["completion_tokens"], 5);
}

TEST(RunBatch, EmbeddingsAndResponsesBodies) {
  IdMinter ids(4);
  const auto embeddings = json::parse(run_batch(
      R"({"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"model":"emb","input":["a","b"]}})",
      "/v1/embeddings", {}, ids, 0));
  EXPECT_EQ(embeddings["response"]["body"]["object"], "list");
  EXPECT_EQ(embeddings["response"]["body"]["data"].size(), 2u);
  const auto responses = json::parse(run_batch(
      R"({"custom_id":"r","method":"POST","url":"/v1/responses","body":{"model":"m","input":"x","max_output_tokens":2}})",
      "/v1/responses", {}, ids, 0));
  EXPECT_EQ(responses["response"]["body"]["object"], "response");
  EXPECT_EQ(responses["response"]["body"]["usage"]["output_tokens"], 2);
}

}  // namespace batch_run_test
}  // namespace smartlb::sim
