#include "smartlb/sim/error_bodies.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {

std::string openai_error_body(std::string_view code, std::string_view message, std::string_view type) {
  nlohmann::ordered_json body{
      {"error", {{"code", code}, {"message", message}, {"type", type}, {"param", nullptr}}}};
  return body.dump();
}

std::string api_error_body(std::string_view message, std::optional<std::string_view> code,
                           std::optional<std::string_view> param, std::string_view type) {
  const auto or_null = [](std::optional<std::string_view> value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json body{
      {"error", {{"message", message}, {"type", type}, {"param", or_null(param)}, {"code", or_null(code)}}}};
  return body.dump();
}

long long retry_after_seconds(std::chrono::milliseconds retry_after) {
  const long long ms = retry_after.count();
  const long long seconds = (ms + 999) / 1000;
  return seconds < 1 ? 1 : seconds;
}

std::string rate_limit_body(Operation operation, std::string_view api_version, RateLimitKind kind,
                            std::chrono::milliseconds retry_after) {
  return rate_limit_body(operation_name(operation), api_version, kind, retry_after);
}

std::string rate_limit_body(std::string_view operation_name, std::string_view api_version, RateLimitKind kind,
                            std::chrono::milliseconds retry_after) {
  std::string message = "Requests to the ";
  message += operation_name;
  message += " Operation under Azure OpenAI API version ";
  message += api_version.empty() ? std::string_view("(none)") : api_version;
  message +=
      kind == RateLimitKind::Tokens ? " have exceeded token rate limit" : " have exceeded call rate limit";
  message += " of your current OpenAI S0 pricing tier. Please retry after ";
  message += std::to_string(retry_after_seconds(retry_after));
  message +=
      " seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to "
      "further increase the default rate limit.";
  nlohmann::ordered_json body{{"error", {{"code", "429"}, {"message", message}}}};
  return body.dump();
}

std::string unauthorized_body() {
  nlohmann::ordered_json body{
      {"error",
       {{"code", "401"},
        {"message",
         "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
         "provide a valid key for an active subscription and use a correct regional API "
         "endpoint for your resource."}}}};
  return body.dump();
}

std::string deployment_not_found_body() {
  return openai_error_body("DeploymentNotFound",
                           "The API deployment for this resource does not exist. If you created "
                           "the deployment within the last 5 minutes, please wait a moment and "
                           "try again.",
                           "invalid_request_error");
}

}  // namespace smartlb::sim
