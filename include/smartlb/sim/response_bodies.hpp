#pragma once
// OpenAI-shaped success bodies: chat / text completions, embeddings, and the SSE events of a
// streamed completion. Deterministic text so tests can check it.

#include "smartlb/sim/route.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace smartlb::sim {

struct CompletionSpec {
  std::string id;  // e.g. "chatcmpl-sim-7"
  std::int64_t created = 0;
  std::string model;
  std::int64_t prompt_tokens = 0;
  int completion_tokens = 1;  // one generated word per token / per content chunk
};

/// Content chunks (= completion tokens) of an answer: min(stream_chunks, max_tokens), at least
/// 1; stream_chunks 0 means "derive from max_tokens", capped at kMaxDerivedChunks.
inline constexpr int kMaxDerivedChunks = 256;
int content_chunk_count(int stream_chunks, std::int64_t max_tokens);

/// The i-th generated piece of text (words of a fixed sentence, cycling).
std::string generated_piece(int index);
/// The whole generated text of `count` pieces.
std::string generated_text(int count);

std::string chat_completion_body(const CompletionSpec& spec);
std::string text_completion_body(const CompletionSpec& spec);

inline constexpr int kEmbeddingDimensions = 8;
// `base64`: each vector as base64 of little-endian float32 values, as the OpenAI SDKs
// request by default and decode themselves.
std::string embeddings_body(const std::string& model, std::int64_t input_count, std::int64_t prompt_tokens,
                            bool base64 = false);

/// The models list health probes ask for: {"object":"list","data":[{"id":<deployment>,
/// "object":"model","created","owned_by":"smartlb-sim"}, ...]}.
std::string models_list_body(const std::vector<std::string>& deployments, std::int64_t created);

struct StreamEvent {
  std::string data;         // a full SSE event: "data: ...\n\n"
  bool is_content = false;  // a content chunk (paced by --chunk-interval-ms)
};

/// Role chunk (chat only), `completion_tokens` content chunks, a finish_reason chunk, the
/// usage chunk when include_usage, then "data: [DONE]".
std::vector<StreamEvent> completion_stream_events(Operation operation, const CompletionSpec& spec,
                                                  bool include_usage);

}  // namespace smartlb::sim
