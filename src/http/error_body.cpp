#include "smartlb/http/error_body.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::http {

std::string openai_error_json(std::string_view message, std::string_view type, std::string_view code) {
  nlohmann::json j = {{"error",
                       {{"message", message},
                        {"type", type},
                        {"param", nullptr},
                        {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace smartlb::http
