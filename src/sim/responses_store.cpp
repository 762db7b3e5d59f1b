#include "smartlb/sim/responses_store.hpp"

#include "smartlb/sim/error_bodies.hpp"
#include "smartlb/sim/list_pages.hpp"
#include "smartlb/sim/route.hpp"

#include <charconv>

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::size_t kResponseOverheadBytes = 512;  // the fixed members of a stored response

std::size_t stored_bytes(const StoredResponse& response) {
  std::size_t bytes =
      kResponseOverheadBytes + response.input_items.dump().size() + response.metadata.dump().size();
  if (response.instructions.is_string()) bytes += response.instructions.get_ref<const std::string&>().size();
  return bytes;
}

}  // namespace

ResponsesStore::ResponsesStore(StoreLimits limits, GenerationSettings generation, IdMinter& ids,
                               const Clock& clock)
    : store_(limits), generation_(generation), ids_(ids), clock_(clock) {}

SimResponse ResponsesStore::not_found(std::string_view id) const {
  return json_response(404,
                       api_error_body("Response with id '" + std::string(id) + "' not found.", "not_found"));
}

StoreAnswer ResponsesStore::create(const ResponsesCreate& request) {
  StoredResponse response;
  response.input_tokens = request.prompt_tokens;
  if (request.previous_response_id) {
    const StoredResponse* previous = store_.find(*request.previous_response_id);
    if (!previous) {
      return {
          bad_request_response("Previous response with id '" + *request.previous_response_id + "' not found.",
                               "previous_response_not_found", "previous_response_id"),
          0};
    }
    response.input_tokens += previous->input_tokens;
    if (previous->status == ResponseStatus::Completed) response.input_tokens += previous->output_tokens;
  }

  response.id = ids_.next("resp_", 48);
  response.model = request.model;
  response.created_at = clock_.unix_seconds();
  response.status = request.background ? ResponseStatus::Queued : ResponseStatus::Completed;
  response.background = request.background;
  response.store = request.store;
  response.previous_response_id = request.previous_response_id;
  response.instructions = request.instructions;
  response.metadata = request.metadata;
  response.max_output_tokens = request.max_output_tokens;
  response.temperature = request.temperature;
  response.top_p = request.top_p;
  response.input_items = request.input_items;
  for (auto& item : response.input_items) {
    if (!item.contains("id")) item["id"] = ids_.next("msg_", 48);
    if (item.value("type", "") == "message" && !item.contains("status")) item["status"] = "completed";
  }
  response.message_id = ids_.next("msg_", 48);
  response.output_tokens = content_chunk_count(
      generation_.stream_chunks, request.max_output_tokens.value_or(generation_.default_max_tokens));

  StoreAnswer answer;
  answer.tokens_served = response.input_tokens + response.output_tokens;
  if (request.stream) {
    answer.response.stream = true;
    answer.response.content_type = "text/event-stream";
    answer.response.events = response_stream_events(response);
    answer.response.chunk_interval = generation_.chunk_interval;
  } else {
    answer.response = json_response(200, response_object(response).dump());
  }
  answer.response.headers.emplace_back("x-request-id", response.id);
  if (request.store) {
    const std::size_t bytes = stored_bytes(response);
    // Too large for the store even when empty: answered, but not kept (like store=false).
    std::string id = response.id;
    if (store_.make_room(bytes)) store_.insert(std::move(id), std::move(response), bytes);
  }
  return answer;
}

SimResponse ResponsesStore::retrieve(std::string_view id, std::string_view query) {
  StoredResponse* response = store_.find(id);
  if (!response) return not_found(id);
  if (response->status == ResponseStatus::Queued) {
    response->status = ResponseStatus::InProgress;
  } else if (response->status == ResponseStatus::InProgress) {
    response->status = ResponseStatus::Completed;
  }
  if (query_parameter(query, "stream").value_or("") != "true") {
    return json_response(200, response_object(*response).dump());
  }
  if (response->status != ResponseStatus::Completed) {
    return bad_request_response("Response '" + std::string(id) + "' is " +
                                    std::string(response_status_name(response->status)) +
                                    "; only a completed response can be streamed again.",
                                std::nullopt, "stream");
  }
  std::int64_t starting_after = -1;
  if (const auto value = query_parameter(query, "starting_after")) {
    const auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), starting_after);
    if (value->empty() || ec != std::errc{} || ptr != value->data() + value->size() || starting_after < 0) {
      return bad_request_response("Invalid 'starting_after': expected a non-negative integer.",
                                  "invalid_value", "starting_after");
    }
  }
  SimResponse stream;
  stream.stream = true;
  stream.content_type = "text/event-stream";
  stream.events = response_stream_events(*response, starting_after);
  stream.chunk_interval = generation_.chunk_interval;
  return stream;
}

SimResponse ResponsesStore::remove(std::string_view id) {
  if (!store_.erase(id)) return not_found(id);
  const ordered_json body{{"id", id}, {"object", "response"}, {"deleted", true}};
  return json_response(200, body.dump());
}

SimResponse ResponsesStore::cancel(std::string_view id) {
  StoredResponse* response = store_.find(id);
  if (!response) return not_found(id);
  if (!response->background) {
    return bad_request_response("Only responses created with background=true can be cancelled.", std::nullopt,
                                std::nullopt);
  }
  if (response->status == ResponseStatus::Completed) {
    return json_response(400,
                         api_error_body("Cannot cancel a completed response.", std::nullopt, std::nullopt));
  }
  response->status = ResponseStatus::Cancelled;
  return json_response(200, response_object(*response).dump());
}

SimResponse ResponsesStore::input_items(std::string_view id, std::string_view query) {
  const StoredResponse* response = store_.find(id);
  if (!response) return not_found(id);
  const auto parsed = parse_list_query(query, 20, 100);
  if (!parsed.query) {
    return bad_request_response(parsed.error.message, parsed.error.code, parsed.error.param);
  }
  const ListQuery& list = *parsed.query;
  const auto& items = response->input_items;
  std::vector<std::size_t> order(items.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = list.order == ListOrder::OldestFirst ? i : items.size() - 1 - i;
  }
  std::size_t start = 0;
  if (!list.after.empty()) {
    start = order.size();
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (items[order[i]].value("id", "") == list.after) start = i + 1;
    }
  }
  ordered_json data = ordered_json::array();
  std::size_t next = start;
  for (; next < order.size() && data.size() < list.limit; ++next) data.push_back(items[order[next]]);
  return json_response(200, list_object(std::move(data), next < order.size()).dump());
}

}  // namespace smartlb::sim
