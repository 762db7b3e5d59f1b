#include "smartlb/sim/api_request.hpp"

#include "smartlb/sim/token_estimate.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

// 'name' in quotes. Built by appending: GCC 12 at -O3 warns (-Wrestrict, PR 105329) on
// "literal" + std::string here.
std::string quoted_name(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out.push_back('\'');
  out.append(name);
  out.push_back('\'');
  return out;
}

ApiRequestParse api_failure(std::string message) {
  ApiRequestParse parse;
  parse.error = std::move(message);
  return parse;
}

std::string_view required_field(Operation operation) {
  switch (operation) {
    case Operation::ChatCompletions:
      return "messages";
    case Operation::Completions:
      return "prompt";
    case Operation::Embeddings:
      return "input";
  }
  return "";
}

}  // namespace

ApiRequestParse parse_api_request(Operation operation, std::string_view body,
                                  std::int64_t default_max_tokens) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return api_failure("We could not parse the JSON body of your request.");
  }

  ApiRequest request;
  request.operation = operation;

  const auto field = required_field(operation);
  const auto required = json.find(field);
  if (required == json.end() || required->is_null() ||
      (operation == Operation::ChatCompletions && !required->is_array())) {
    return api_failure(quoted_name(field) + " is a required property");
  }
  if (operation == Operation::Embeddings) {
    request.input_count = required->is_array() && !required->empty() && !required->front().is_number_integer()
                              ? static_cast<std::int64_t>(required->size())
                              : 1;
    if (const auto format = json.find("encoding_format"); format != json.end()) {
      if (!format->is_string() || (*format != "float" && *format != "base64"))
        return api_failure("'encoding_format' must be 'float' or 'base64'");
      request.base64_embeddings = *format == "base64";
    }
  }

  if (const auto model = json.find("model"); model != json.end()) {
    if (!model->is_string()) return api_failure("'model' must be a string");
    request.model = model->get<std::string>();
  }

  if (operation != Operation::Embeddings) {
    if (const auto stream = json.find("stream"); stream != json.end() && !stream->is_null()) {
      if (!stream->is_boolean()) return api_failure("'stream' must be a boolean");
      request.stream = stream->get<bool>();
    }
    if (const auto options = json.find("stream_options"); options != json.end() && options->is_object()) {
      const auto usage = options->find("include_usage");
      request.include_usage = usage != options->end() && usage->is_boolean() && usage->get<bool>();
    }
    request.max_tokens = default_max_tokens;
    for (const char* name : {"max_tokens", "max_completion_tokens"}) {
      const auto value = json.find(name);
      if (value == json.end() || value->is_null()) continue;
      if (!value->is_number_integer() || value->get<std::int64_t>() < 1) {
        return api_failure(quoted_name(name) + " must be a positive integer");
      }
      request.max_tokens = value->get<std::int64_t>();
      break;
    }
  }

  request.prompt_tokens = tokens_from_characters(prompt_characters(operation, json));

  ApiRequestParse parse;
  parse.request = std::move(request);
  return parse;
}

}  // namespace smartlb::sim
