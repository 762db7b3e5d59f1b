#pragma once
// Error answers in OpenAI's JSON shape: {"error":{"message","type","param","code"}}.
#include <string>
#include <string_view>

namespace smartlb::http {

std::string openai_error_json(std::string_view message, std::string_view type, std::string_view code);

}  // namespace smartlb::http
