// Usage of Realtime's response.done and Responses' response.completed
// (include/smartlb/websocket/realtime_usage.hpp).
#include "smartlb/websocket/realtime_usage.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

namespace smartlb::websocket {
namespace {

// `quoted_type`: the event's type with its quotes, as it stands in the JSON text.
std::optional<RealtimeUsage> event_usage(std::string_view text, std::string_view quoted_type) {
  // Most events are deltas: a cheap look for the type before any parse.
  if (text.find(quoted_type) == std::string_view::npos) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string() ||
      type->get_ref<const std::string&>() != quoted_type.substr(1, quoted_type.size() - 2))
    return std::nullopt;
  const auto response = j.find("response");
  if (response == j.end() || !response->is_object()) return std::nullopt;
  const auto usage = response->find("usage");
  if (usage == response->end() || !usage->is_object()) return std::nullopt;
  RealtimeUsage u;
  bool any = false;
  for (const auto& [name, field] :
       {std::pair{"input_tokens", &u.input_tokens}, std::pair{"output_tokens", &u.output_tokens}}) {
    const auto v = usage->find(name);
    if (v != usage->end() && v->is_number_integer() && v->get<std::int64_t>() >= 0) {
      *field = v->get<std::int64_t>();
      any = true;
    }
  }
  if (!any) return std::nullopt;
  if (const auto model = response->find("model"); model != response->end() && model->is_string())
    u.model = model->get<std::string>();
  return u;
}

}  // namespace

std::optional<RealtimeUsage> response_done_usage(std::string_view text) {
  return event_usage(text, "\"response.done\"");
}

std::optional<RealtimeUsage> response_completed_usage(std::string_view text) {
  return event_usage(text, "\"response.completed\"");
}

bool is_response_created(std::string_view text) {
  if (text.find("\"response.created\"") == std::string_view::npos) return false;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  const auto type = j.find("type");
  return type != j.end() && *type == "response.created";
}

namespace {

// The types of the events that end a response, quoted as they stand in an event's text.
constexpr std::string_view kQuotedEndTypes[] = {"\"response.done\"", "\"response.completed\"",
                                                "\"response.failed\"", "\"response.incomplete\""};

}  // namespace

bool is_response_end(std::string_view text) {
  // Most events are deltas (their type begins "response." too): a cheap look before any parse.
  if (std::none_of(std::begin(kQuotedEndTypes), std::end(kQuotedEndTypes),
                   [&](std::string_view q) { return text.find(q) != std::string_view::npos; }))
    return false;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string()) return false;
  const std::string& t = type->get_ref<const std::string&>();
  return std::any_of(std::begin(kQuotedEndTypes), std::end(kQuotedEndTypes),
                     [&](std::string_view q) { return q.substr(1, q.size() - 2) == t; });
}

bool starts_as_response_end(std::string_view prefix) {
  // {"type":"response.done", ... with any whitespace OpenAI's encoders might put in.
  std::size_t i = prefix.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || prefix[i] != '{') return false;
  i = prefix.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos || prefix.substr(i, 6) != "\"type\"") return false;
  i = prefix.find_first_not_of(" \t\r\n", i + 6);
  if (i == std::string_view::npos || prefix[i] != ':') return false;
  i = prefix.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos) return false;
  return std::any_of(std::begin(kQuotedEndTypes), std::end(kQuotedEndTypes),
                     [&](std::string_view q) { return prefix.substr(i, q.size()) == q; });
}

}  // namespace smartlb::websocket
