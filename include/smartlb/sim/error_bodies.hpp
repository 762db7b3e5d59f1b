#pragma once
// OpenAI / Azure OpenAI error bodies: {"error": {"code": ..., "message": ..., ...}}.

#include "smartlb/sim/route.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

/// {"error":{"code":code,"message":message,"type":type,"param":null}}
std::string openai_error_body(std::string_view code, std::string_view message,
                              std::string_view type = "invalid_request_error");

/// OpenAI's error shape with every member: {"error":{"message","type","param","code"}}, param
/// and code null when absent (the shape of the Responses, Files and Batches APIs' errors).
std::string api_error_body(std::string_view message, std::optional<std::string_view> code,
                           std::optional<std::string_view> param = std::nullopt,
                           std::string_view type = "invalid_request_error");

enum class RateLimitKind { Tokens, Requests };

/// Seconds for Retry-After: ceil(ms / 1000), at least 1.
long long retry_after_seconds(std::chrono::milliseconds retry_after);

/// Azure's 429 body: {"error":{"code":"429","message":"Requests to the ChatCompletions_Create
/// Operation under Azure OpenAI API version V have exceeded token rate limit ... Please retry
/// after N seconds. ..."}}
std::string rate_limit_body(Operation operation, std::string_view api_version, RateLimitKind kind,
                            std::chrono::milliseconds retry_after);
/// The same for an operation named in words, e.g. "Responses_Create".
std::string rate_limit_body(std::string_view operation_name, std::string_view api_version, RateLimitKind kind,
                            std::chrono::milliseconds retry_after);

std::string unauthorized_body();
std::string deployment_not_found_body();

}  // namespace smartlb::sim
