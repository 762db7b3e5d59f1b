#include "smartlb/sim/responses_request.hpp"

#include "smartlb/sim/token_estimate.hpp"

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

ResponsesCreateParse failure(std::string message, std::optional<std::string> param,
                             std::optional<std::string> code) {
  ResponsesCreateParse parse;
  parse.error = {std::move(message), std::move(param), std::move(code)};
  return parse;
}

std::string_view json_type_name(const ordered_json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

ResponsesCreateParse invalid_type(const std::string& param, std::string_view expected,
                                  const ordered_json& value) {
  std::string message = "Invalid type for '";
  message += param;
  message += "': expected ";
  message += expected;
  message += ", but got ";
  message += json_type_name(value);
  message += " instead.";
  return failure(std::move(message), param, "invalid_type");
}

// A message's string content as one part: input_text for the user, system and developer,
// output_text for the assistant (what OpenAI's input_items list shows).
ordered_json text_parts(const std::string& role, const std::string& text) {
  const char* type = role == "assistant" ? "output_text" : "input_text";
  return ordered_json::array({{{"type", type}, {"text", text}}});
}

}  // namespace

std::size_t input_text_bytes(const ordered_json& items) {
  std::size_t total = 0;
  const auto text_of = [](const ordered_json& object, const char* key) -> std::size_t {
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get_ref<const std::string&>().size() : 0;
  };
  for (const auto& item : items) {
    if (!item.is_object()) continue;
    total += text_of(item, "output");
    const auto content = item.find("content");
    if (content == item.end()) continue;
    if (content->is_string()) total += content->get_ref<const std::string&>().size();
    if (!content->is_array()) continue;
    for (const auto& part : *content) {
      if (part.is_object()) total += text_of(part, "text");
    }
  }
  return total;
}

ResponsesCreateParse parse_responses_create(std::string_view body) {
  const auto json = ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return failure(
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
        "your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not "
        "valid JSON.)",
        std::nullopt, std::nullopt);
  }
  ResponsesCreate request;

  const auto model = json.find("model");
  if (model == json.end() || model->is_null()) {
    return failure("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
  if (!model->is_string()) return invalid_type("model", "a string", *model);
  request.model = model->get<std::string>();

  for (const auto& [name, slot] : {std::pair<const char*, bool*>{"stream", &request.stream},
                                   {"background", &request.background},
                                   {"store", &request.store}}) {
    const auto value = json.find(name);
    if (value == json.end() || value->is_null()) continue;
    if (!value->is_boolean()) return invalid_type(name, "a boolean", *value);
    *slot = value->get<bool>();
  }
  if (request.background && !request.store) {
    return failure("Background mode requires 'store' to be true.", "background", "invalid_value");
  }

  for (const auto& [name, slot] :
       {std::pair<const char*, double*>{"temperature", &request.temperature}, {"top_p", &request.top_p}}) {
    const auto value = json.find(name);
    if (value == json.end() || value->is_null()) continue;
    if (!value->is_number()) return invalid_type(name, "a decimal", *value);
    *slot = value->get<double>();
  }

  if (const auto value = json.find("max_output_tokens"); value != json.end() && !value->is_null()) {
    if (!value->is_number_integer()) return invalid_type("max_output_tokens", "an integer", *value);
    if (value->get<std::int64_t>() < 1) {
      return failure("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 1.",
                     "max_output_tokens", "integer_below_min_value");
    }
    request.max_output_tokens = value->get<std::int64_t>();
  }

  if (const auto value = json.find("previous_response_id"); value != json.end() && !value->is_null()) {
    if (!value->is_string()) return invalid_type("previous_response_id", "a string", *value);
    request.previous_response_id = value->get<std::string>();
  }

  if (const auto value = json.find("instructions"); value != json.end() && !value->is_null()) {
    if (!value->is_string()) return invalid_type("instructions", "a string", *value);
    request.instructions = *value;
  }

  if (const auto value = json.find("metadata"); value != json.end() && !value->is_null()) {
    if (!value->is_object()) return invalid_type("metadata", "an object", *value);
    request.metadata = *value;
  }

  if (const auto input = json.find("input"); input != json.end() && !input->is_null()) {
    if (input->is_string()) {
      request.input_items.push_back({{"type", "message"},
                                     {"role", "user"},
                                     {"content", text_parts("user", input->get<std::string>())}});
    } else if (input->is_array()) {
      for (std::size_t i = 0; i < input->size(); ++i) {
        const auto& item = (*input)[i];
        const std::string param = "input[" + std::to_string(i) + "]";
        if (!item.is_object()) return invalid_type(param, "an object", item);
        ordered_json normalised = item;
        const auto role = item.find("role");
        const auto type = item.find("type");
        const bool message = role != item.end() && (type == item.end() || *type == "message");
        if (message) {
          if (!role->is_string()) return invalid_type(param + ".role", "a string", *role);
          normalised = {{"type", "message"}, {"role", *role}};
          const auto content = item.find("content");
          if (content == item.end() || !(content->is_string() || content->is_array())) {
            return failure("Missing required parameter: '" + param + ".content'.", param + ".content",
                           "missing_required_parameter");
          }
          normalised["content"] = content->is_string()
                                      ? text_parts(role->get<std::string>(), content->get<std::string>())
                                      : *content;
        }
        request.input_items.push_back(std::move(normalised));
      }
    } else {
      return invalid_type("input", "a string or an array", *input);
    }
  }

  std::size_t characters = input_text_bytes(request.input_items);
  if (request.instructions.is_string())
    characters += request.instructions.get_ref<const std::string&>().size();
  request.prompt_tokens = tokens_from_characters(characters);

  ResponsesCreateParse parse;
  parse.request = std::move(request);
  return parse;
}

}  // namespace smartlb::sim
