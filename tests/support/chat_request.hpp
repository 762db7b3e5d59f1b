#pragma once
// The chat request the quota tests send: 400 characters of content (100 tokens, as Azure's
// limiter estimates) + max_tokens 100 = 200 tokens a request.
#include <string>

namespace smartlb::testing {

inline const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=1";
inline const std::string kBody =
    R"({"messages":[{"role":"user","content":")" + std::string(400, 'x') + R"("}],"max_tokens":100})";

}  // namespace smartlb::testing
