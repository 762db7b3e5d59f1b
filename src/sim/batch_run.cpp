#include "smartlb/sim/batch_run.hpp"

#include "smartlb/sim/api_request.hpp"
#include "smartlb/sim/response_bodies.hpp"
#include "smartlb/sim/response_objects.hpp"
#include "smartlb/sim/responses_request.hpp"
#include "smartlb/sim/token_estimate.hpp"

#include <array>

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 4> kBatchEndpoints{"/v1/chat/completions", "/v1/completions",
                                                          "/v1/embeddings", "/v1/responses"};

// Calls `visit(line_number, line)` for every non-empty line.
template <class Visit>
void for_each_line(std::string_view input, Visit&& visit) {
  std::int64_t number = 0;
  while (!input.empty()) {
    const std::size_t end = std::min(input.find('\n'), input.size());
    std::string_view line = input.substr(0, end);
    input.remove_prefix(std::min(end + 1, input.size()));
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    visit(number, line);
  }
}

ordered_json answer_body(std::string_view endpoint, const ordered_json& body,
                         const BatchGeneration& generation, IdMinter& ids, std::int64_t now_unix) {
  const nlohmann::json plain = nlohmann::json::parse(body.dump());
  const std::string model = body.value("model", "");
  if (endpoint == "/v1/responses") {
    const auto parsed = parse_responses_create(body.dump());
    StoredResponse response;
    response.id = ids.next("resp_", 48);
    response.model = model;
    response.created_at = now_unix;
    response.message_id = ids.next("msg_", 48);
    if (parsed.request) {
      response.input_tokens = parsed.request->prompt_tokens;
      response.metadata = parsed.request->metadata;
      response.instructions = parsed.request->instructions;
      response.max_output_tokens = parsed.request->max_output_tokens;
    }
    response.output_tokens = content_chunk_count(
        generation.stream_chunks, response.max_output_tokens.value_or(generation.default_max_tokens));
    return response_object(response);
  }
  const Operation operation = endpoint == "/v1/embeddings"    ? Operation::Embeddings
                              : endpoint == "/v1/completions" ? Operation::Completions
                                                              : Operation::ChatCompletions;
  const std::int64_t prompt_tokens = tokens_from_characters(prompt_characters(operation, plain));
  if (operation == Operation::Embeddings) {
    const auto input = plain.find("input");
    const std::int64_t inputs =
        input != plain.end() && input->is_array() && !input->empty() && !input->front().is_number_integer()
            ? static_cast<std::int64_t>(input->size())
            : 1;
    return ordered_json::parse(embeddings_body(model, inputs, prompt_tokens));
  }
  const auto parsed = parse_api_request(operation, plain.dump(), generation.default_max_tokens);
  CompletionSpec spec;
  spec.id = (operation == Operation::ChatCompletions ? "chatcmpl-" : "cmpl-") + ids.next("", 24);
  spec.created = now_unix;
  spec.model = model;
  spec.prompt_tokens = prompt_tokens;
  spec.completion_tokens = content_chunk_count(
      generation.stream_chunks, parsed.request ? parsed.request->max_tokens : generation.default_max_tokens);
  return ordered_json::parse(operation == Operation::ChatCompletions ? chat_completion_body(spec)
                                                                     : text_completion_body(spec));
}

}  // namespace

std::optional<std::string> batch_endpoint(std::string_view endpoint) {
  std::string normalised =
      endpoint.starts_with("/v1/") ? std::string(endpoint) : "/v1" + std::string(endpoint);
  for (const auto known : kBatchEndpoints) {
    if (normalised == known) return normalised;
  }
  return std::nullopt;
}

BatchValidation validate_batch_input(std::string_view input, std::string_view endpoint,
                                     std::size_t max_errors) {
  BatchValidation validation;
  const auto fail = [&](std::string code, std::string message, std::int64_t line) {
    if (validation.errors.size() < max_errors)
      validation.errors.push_back({std::move(code), std::move(message), line});
  };
  for_each_line(input, [&](std::int64_t number, std::string_view line) {
    ++validation.requests;
    const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) {
      fail("invalid_json_line", "This line is not parseable as valid JSON.", number);
      return;
    }
    const auto custom_id = json.find("custom_id");
    if (custom_id == json.end() || !custom_id->is_string() ||
        custom_id->get_ref<const std::string&>().empty()) {
      fail("missing_custom_id", "The request must have a non-empty string 'custom_id'.", number);
      return;
    }
    if (json.value("method", "") != "POST") {
      fail("invalid_method", "The request's 'method' must be 'POST'.", number);
      return;
    }
    const auto url = json.find("url");
    const auto normalised =
        url != json.end() && url->is_string() ? batch_endpoint(url->get<std::string>()) : std::nullopt;
    if (!normalised || *normalised != endpoint) {
      fail("mismatched_url",
           "The request's 'url' must be the batch's endpoint " + std::string(endpoint) + ".", number);
      return;
    }
    const auto body = json.find("body");
    if (body == json.end() || !body->is_object()) {
      fail("invalid_body", "The request's 'body' must be a JSON object.", number);
    }
  });
  return validation;
}

std::string run_batch(std::string_view input, std::string_view endpoint, const BatchGeneration& generation,
                      IdMinter& ids, std::int64_t now_unix) {
  std::string output;
  for_each_line(input, [&](std::int64_t, std::string_view line) {
    const auto request = ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded() || !request.is_object()) return;  // validated before: not reached
    const ordered_json body = request.contains("body") ? request["body"] : ordered_json::object();
    ordered_json out{{"id", ids.next("batch_req_", 32)},
                     {"custom_id", request.value("custom_id", "")},
                     {"response",
                      {{"status_code", 200},
                       {"request_id", ids.next("", 32)},
                       {"body", answer_body(endpoint, body, generation, ids, now_unix)}}},
                     {"error", nullptr}};
    output += out.dump();
    output += '\n';
  });
  return output;
}

}  // namespace smartlb::sim
