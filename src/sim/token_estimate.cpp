#include "smartlb/sim/token_estimate.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

// Bytes of a chat message content: a string, or an array of parts with "text".
std::size_t content_characters(const nlohmann::json& content) {
  if (content.is_string()) return content.get_ref<const std::string&>().size();
  std::size_t total = 0;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object()) {
        const auto text = part.find("text");
        if (text != part.end() && text->is_string()) total += text->get_ref<const std::string&>().size();
      }
    }
  }
  return total;
}

// Bytes of Anthropic content: a string, or blocks with "text" (text blocks) or "content"
// (tool_result blocks, whose content is itself a string or blocks).
std::size_t block_characters(const nlohmann::json& content) {
  if (content.is_string()) return content.get_ref<const std::string&>().size();
  std::size_t total = 0;
  if (content.is_array()) {
    for (const auto& block : content) {
      if (!block.is_object()) continue;
      if (const auto text = block.find("text"); text != block.end() && text->is_string()) {
        total += text->get_ref<const std::string&>().size();
      } else if (const auto nested = block.find("content"); nested != block.end()) {
        total += block_characters(*nested);
      }
    }
  }
  return total;
}

// A prompt / input: string, array of strings, token array (4 bytes per token), or array of
// token arrays.
std::size_t text_or_tokens_characters(const nlohmann::json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>().size();
  if (value.is_number_integer()) return 4;
  std::size_t total = 0;
  if (value.is_array()) {
    for (const auto& item : value) total += text_or_tokens_characters(item);
  }
  return total;
}

}  // namespace

std::size_t prompt_characters(Operation operation, const nlohmann::json& body) {
  if (!body.is_object()) return 0;
  switch (operation) {
    case Operation::ChatCompletions: {
      std::size_t total = 0;
      const auto messages = body.find("messages");
      if (messages != body.end() && messages->is_array()) {
        for (const auto& message : *messages) {
          if (!message.is_object()) continue;
          const auto content = message.find("content");
          if (content != message.end()) total += content_characters(*content);
        }
      }
      return total;
    }
    case Operation::Completions: {
      const auto prompt = body.find("prompt");
      return prompt == body.end() ? 0 : text_or_tokens_characters(*prompt);
    }
    case Operation::Embeddings: {
      const auto input = body.find("input");
      return input == body.end() ? 0 : text_or_tokens_characters(*input);
    }
  }
  return 0;
}

std::size_t messages_prompt_characters(const nlohmann::json& body) {
  if (!body.is_object()) return 0;
  std::size_t total = 0;
  if (const auto system = body.find("system"); system != body.end()) total += block_characters(*system);
  if (const auto messages = body.find("messages"); messages != body.end() && messages->is_array()) {
    for (const auto& message : *messages) {
      if (!message.is_object()) continue;
      if (const auto content = message.find("content"); content != message.end())
        total += block_characters(*content);
    }
  }
  if (const auto tools = body.find("tools"); tools != body.end() && !tools->is_null())
    total += tools->dump().size();
  return total;
}

std::int64_t tokens_from_characters(std::size_t characters) {
  const auto tokens = static_cast<std::int64_t>(characters / 4);
  return tokens < 1 ? 1 : tokens;
}

}  // namespace smartlb::sim
