#include "smartlb/sim/response_bodies.hpp"

#include <cstring>

#include <algorithm>
#include <array>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 10> kWords{"This",  " is",          " a", " simulated", " answer",
                                                  " from", " smartlb-sim", ",",  " token",     " by"};

ordered_json usage_json(const CompletionSpec& spec) {
  return {{"prompt_tokens", spec.prompt_tokens},
          {"completion_tokens", spec.completion_tokens},
          {"total_tokens", spec.prompt_tokens + spec.completion_tokens}};
}

ordered_json envelope(const CompletionSpec& spec, std::string_view object) {
  return {{"id", spec.id}, {"object", object}, {"created", spec.created}, {"model", spec.model}};
}

std::string sse(const ordered_json& payload) { return "data: " + payload.dump() + "\n\n"; }

ordered_json chat_chunk(const CompletionSpec& spec, ordered_json delta, const char* finish_reason,
                        bool include_usage) {
  auto chunk = envelope(spec, "chat.completion.chunk");
  chunk["choices"] = ordered_json::array(
      {{{"index", 0},
        {"delta", std::move(delta)},
        {"logprobs", nullptr},
        {"finish_reason", finish_reason ? ordered_json(finish_reason) : ordered_json(nullptr)}}});
  if (include_usage) chunk["usage"] = nullptr;
  return chunk;
}

ordered_json text_chunk(const CompletionSpec& spec, std::string_view text, const char* finish_reason,
                        bool include_usage) {
  auto chunk = envelope(spec, "text_completion");
  chunk["choices"] = ordered_json::array(
      {{{"text", text},
        {"index", 0},
        {"logprobs", nullptr},
        {"finish_reason", finish_reason ? ordered_json(finish_reason) : ordered_json(nullptr)}}});
  if (include_usage) chunk["usage"] = nullptr;
  return chunk;
}

}  // namespace

int content_chunk_count(int stream_chunks, std::int64_t max_tokens) {
  const std::int64_t wanted = stream_chunks > 0 ? stream_chunks : kMaxDerivedChunks;
  const std::int64_t count = std::min(wanted, std::max<std::int64_t>(max_tokens, 1));
  return static_cast<int>(std::max<std::int64_t>(count, 1));
}

std::string generated_piece(int index) {
  return std::string(kWords[static_cast<std::size_t>(index) % kWords.size()]);
}

std::string generated_text(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += generated_piece(i);
  return text;
}

std::string chat_completion_body(const CompletionSpec& spec) {
  auto body = envelope(spec, "chat.completion");
  body["choices"] = ordered_json::array(
      {{{"index", 0},
        {"message", {{"role", "assistant"}, {"content", generated_text(spec.completion_tokens)}}},
        {"logprobs", nullptr},
        {"finish_reason", "stop"}}});
  body["usage"] = usage_json(spec);
  body["system_fingerprint"] = "smartlb-sim";
  return body.dump();
}

std::string text_completion_body(const CompletionSpec& spec) {
  auto body = envelope(spec, "text_completion");
  body["choices"] = ordered_json::array({{{"text", generated_text(spec.completion_tokens)},
                                          {"index", 0},
                                          {"logprobs", nullptr},
                                          {"finish_reason", "stop"}}});
  body["usage"] = usage_json(spec);
  return body.dump();
}

namespace {
std::string base64_of(const unsigned char* p, std::size_t n) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < n; i += 3) {
    const unsigned v = (p[i] << 16) | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  return out;
}
}  // namespace

std::string embeddings_body(const std::string& model, std::int64_t input_count, std::int64_t prompt_tokens,
                            bool base64) {
  ordered_json data = ordered_json::array();
  for (std::int64_t i = 0; i < input_count; ++i) {
    float values[kEmbeddingDimensions];
    for (int d = 0; d < kEmbeddingDimensions; ++d)
      values[d] = static_cast<float>((d + 1) * 125 + i % 8) / 1000.0f;
    ordered_json vector = ordered_json::array();
    for (float v : values) vector.push_back(static_cast<double>(v));
    ordered_json embedding = std::move(vector);
    if (base64) {
      static_assert(sizeof(float) == 4);
      unsigned char bytes[sizeof values];  // little-endian float32, as the wire format says
      for (int d = 0; d < kEmbeddingDimensions; ++d) {
        std::uint32_t bits;
        std::memcpy(&bits, &values[d], 4);
        for (int b = 0; b < 4; ++b) bytes[d * 4 + b] = static_cast<unsigned char>(bits >> (8 * b));
      }
      embedding = base64_of(bytes, sizeof bytes);
    }
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::move(embedding)}});
  }
  ordered_json body{{"object", "list"},
                    {"data", std::move(data)},
                    {"model", model},
                    {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
  return body.dump();
}

std::string models_list_body(const std::vector<std::string>& deployments, std::int64_t created) {
  ordered_json data = ordered_json::array();
  for (const auto& name : deployments) {
    data.push_back({{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "smartlb-sim"}});
  }
  return ordered_json{{"object", "list"}, {"data", std::move(data)}}.dump();
}

std::vector<StreamEvent> completion_stream_events(Operation operation, const CompletionSpec& spec,
                                                  bool include_usage) {
  std::vector<StreamEvent> events;
  events.reserve(static_cast<std::size_t>(spec.completion_tokens) + 4);
  const bool chat = operation == Operation::ChatCompletions;
  if (chat) {
    events.push_back(
        {sse(chat_chunk(spec, {{"role", "assistant"}, {"content", ""}}, nullptr, include_usage)), false});
  }
  for (int i = 0; i < spec.completion_tokens; ++i) {
    const auto piece = generated_piece(i);
    events.push_back({sse(chat ? chat_chunk(spec, {{"content", piece}}, nullptr, include_usage)
                               : text_chunk(spec, piece, nullptr, include_usage)),
                      true});
  }
  events.push_back({sse(chat ? chat_chunk(spec, ordered_json::object(), "stop", include_usage)
                             : text_chunk(spec, "", "stop", include_usage)),
                    false});
  if (include_usage) {
    auto chunk = envelope(spec, chat ? "chat.completion.chunk" : "text_completion");
    chunk["choices"] = ordered_json::array();
    chunk["usage"] = usage_json(spec);
    events.push_back({sse(chunk), false});
  }
  events.push_back({"data: [DONE]\n\n", false});
  return events;
}

}  // namespace smartlb::sim
