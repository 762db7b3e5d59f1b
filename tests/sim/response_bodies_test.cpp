#include "smartlb/sim/response_bodies.hpp"

#include <cstring>

#include "smartlb/sim/api_request.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace response_bodies_test {  // named, not anonymous: tests/CMakeLists.txt

CompletionSpec spec(int completion_tokens = 3) {
  return CompletionSpec{"chatcmpl-sim-1", 1700000000, "gpt-4o", 7, completion_tokens};
}

nlohmann::json event_json(const StreamEvent& event) {
  EXPECT_TRUE(event.data.starts_with("data: ")) << event.data;
  EXPECT_TRUE(event.data.ends_with("\n\n")) << event.data;
  return nlohmann::json::parse(event.data.substr(6));
}

TEST(ContentChunkCount, FlagCappedByMaxTokens) {
  EXPECT_EQ(content_chunk_count(5, 16), 5);
  EXPECT_EQ(content_chunk_count(5, 2), 2);
  EXPECT_EQ(content_chunk_count(5, 0), 1);
}

TEST(ContentChunkCount, ZeroDerivesFromMaxTokensCapped) {
  EXPECT_EQ(content_chunk_count(0, 40), 40);
  EXPECT_EQ(content_chunk_count(0, 100000), kMaxDerivedChunks);
}

TEST(GeneratedText, IsTheConcatenationOfPieces) {
  EXPECT_EQ(generated_text(3), generated_piece(0) + generated_piece(1) + generated_piece(2));
  EXPECT_EQ(generated_text(0), "");
  EXPECT_EQ(generated_piece(0), generated_piece(10));  // cycles
}

TEST(ChatCompletionBody, HasOpenAIShapeAndUsage) {
  const auto body = nlohmann::json::parse(chat_completion_body(spec()));
  EXPECT_EQ(body["id"], "chatcmpl-sim-1");
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["created"], 1700000000);
  EXPECT_EQ(body["model"], "gpt-4o");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], generated_text(3));
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(body["usage"],
            (nlohmann::json{{"prompt_tokens", 7}, {"completion_tokens", 3}, {"total_tokens", 10}}));
}

TEST(TextCompletionBody, HasTextChoiceAndUsage) {
  const auto body = nlohmann::json::parse(text_completion_body(spec(2)));
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0]["text"], generated_text(2));
  EXPECT_EQ(body["usage"]["total_tokens"], 9);
}

TEST(EmbeddingsBody, OneSmallVectorPerInputAndUsage) {
  const auto body = nlohmann::json::parse(embeddings_body("emb", 2, 5));
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][1]["index"], 1);
  EXPECT_EQ(body["data"][0]["object"], "embedding");
  ASSERT_EQ(body["data"][0]["embedding"].size(), static_cast<std::size_t>(kEmbeddingDimensions));
  EXPECT_TRUE(body["data"][0]["embedding"][0].is_number_float());
  EXPECT_EQ(body["model"], "emb");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 5);
}

TEST(CompletionStreamEvents, ChatRoleContentFinishUsageDone) {
  const auto events = completion_stream_events(Operation::ChatCompletions, spec(3), true);
  ASSERT_EQ(events.size(), 1u + 3u + 1u + 1u + 1u);
  const auto role = event_json(events[0]);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_FALSE(events[0].is_content);
  std::string text;
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(events[i].is_content);
    text += event_json(events[i])["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(text, generated_text(3));
  EXPECT_EQ(event_json(events[4])["choices"][0]["finish_reason"], "stop");
  const auto usage = event_json(events[5]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(usage["usage"]["total_tokens"], 10);
  EXPECT_EQ(events[6].data, "data: [DONE]\n\n");
}

TEST(CompletionStreamEvents, NoUsageChunkUnlessAsked) {
  const auto events = completion_stream_events(Operation::ChatCompletions, spec(2), false);
  ASSERT_EQ(events.size(), 1u + 2u + 1u + 1u);
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_FALSE(event_json(events[i]).contains("usage"));
  }
  EXPECT_EQ(events.back().data, "data: [DONE]\n\n");
}

TEST(CompletionStreamEvents, LegacyCompletionsHaveNoRoleChunk) {
  const auto events = completion_stream_events(Operation::Completions, spec(2), true);
  ASSERT_EQ(events.size(), 2u + 1u + 1u + 1u);
  EXPECT_TRUE(events[0].is_content);
  EXPECT_EQ(event_json(events[0])["object"], "text_completion");
  EXPECT_EQ(event_json(events[0])["choices"][0]["text"], generated_piece(0));
  EXPECT_EQ(event_json(events[3])["usage"]["prompt_tokens"], 7);
}

}  // namespace response_bodies_test
}  // namespace smartlb::sim

namespace smartlb::sim {
namespace response_bodies_test {

// Decodes standard base64 (test helper).
std::vector<unsigned char> from_base64(const std::string& s) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<unsigned char> out;
  unsigned bits = 0;
  int count = 0;
  for (char c : s) {
    const int v = value(c);
    if (v < 0) break;
    bits = (bits << 6) | static_cast<unsigned>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<unsigned char>(bits >> count));
    }
  }
  return out;
}

TEST(ResponseBodiesBase64, EmbeddingsAsBase64Float32DecodeToTheFloatValues) {
  const auto as_float = nlohmann::json::parse(embeddings_body("emb", 1, 5, false));
  const auto as_b64 = nlohmann::json::parse(embeddings_body("emb", 1, 5, true));
  const auto floats = as_float["data"][0]["embedding"];
  const auto bytes = from_base64(as_b64["data"][0]["embedding"].get<std::string>());
  ASSERT_EQ(bytes.size(), floats.size() * 4);
  for (std::size_t d = 0; d < floats.size(); ++d) {
    std::uint32_t bits = 0;
    for (int b = 0; b < 4; ++b) bits |= std::uint32_t{bytes[d * 4 + b]} << (8 * b);
    float f;
    std::memcpy(&f, &bits, 4);
    EXPECT_FLOAT_EQ(f, floats[d].get<float>()) << d;
  }
}

TEST(ResponseBodiesBase64, ApiRequestReadsEncodingFormat) {
  auto r = parse_api_request(Operation::Embeddings, R"({"input":"hi","encoding_format":"base64"})");
  ASSERT_TRUE(r.request);
  EXPECT_TRUE(r.request->base64_embeddings);
  EXPECT_FALSE(
      parse_api_request(Operation::Embeddings, R"({"input":"hi","encoding_format":"bits"})").request);
}

}  // namespace response_bodies_test
}  // namespace smartlb::sim
