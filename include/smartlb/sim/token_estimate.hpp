#pragma once
// Cheap token estimate of a request, the way the simulator charges quota: one token per four
// bytes of prompt text, at least 1.

#include "smartlb/sim/route.hpp"

#include <cstddef>
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

namespace smartlb::sim {

/// Bytes of prompt text in a request body: chat = every message's content (string, or the
/// `text` of content parts); completions = `prompt` (string or array of strings);
/// embeddings = `input` (string, array of strings, or token arrays counted as 4 bytes/token).
std::size_t prompt_characters(Operation operation, const nlohmann::json& body);

/// Bytes of prompt text in a body of Anthropic's Messages API: `system` (a string or text
/// blocks), every message's content (a string, or blocks: a block's `text`, a tool_result's
/// `content`) and the JSON text of `tools`.
std::size_t messages_prompt_characters(const nlohmann::json& body);

/// max(1, characters / 4).
std::int64_t tokens_from_characters(std::size_t characters);

}  // namespace smartlb::sim
