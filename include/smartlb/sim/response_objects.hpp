#pragma once
// A stored response of the Responses API and what the simulator sends for it: the Response
// object (JSON) and the server-sent events of a streamed one, in OpenAI's order and shape:
// response.created, response.in_progress, response.output_item.added,
// response.content_part.added, one response.output_text.delta per generated piece,
// response.output_text.done, response.content_part.done, response.output_item.done,
// response.completed (with usage). Pure.

#include "smartlb/sim/response_bodies.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

enum class ResponseStatus { Queued, InProgress, Completed, Cancelled };

std::string_view response_status_name(ResponseStatus status);

struct StoredResponse {
  std::string id;  // resp_...
  std::string model;
  std::int64_t created_at = 0;  // Unix seconds
  ResponseStatus status = ResponseStatus::Completed;
  bool background = false;
  bool store = true;
  std::optional<std::string> previous_response_id;
  nlohmann::ordered_json instructions = nullptr;
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  std::optional<std::int64_t> max_output_tokens;
  double temperature = 1.0;
  double top_p = 1.0;
  nlohmann::ordered_json input_items = nlohmann::ordered_json::array();  // with ids (msg_...)
  std::string message_id;                                                // the output message (msg_...)
  int output_tokens = 1;                                                 // = generated pieces
  /// The whole context the answer was generated from: this input plus every earlier turn of
  /// the previous_response_id chain (their inputs and outputs), so it grows turn by turn.
  std::int64_t input_tokens = 1;
};

/// The Response object. Output and usage only once completed (empty / null before, and when
/// cancelled).
nlohmann::ordered_json response_object(const StoredResponse& response);

/// The SSE events of generating `response` (taken as completed); content deltas are marked
/// is_content (paced by --chunk-interval-ms). Events before `starting_after` (a
/// sequence_number) are left out, as GET /responses/{id}?stream=true&starting_after=N does.
std::vector<StreamEvent> response_stream_events(const StoredResponse& response,
                                                std::int64_t starting_after = -1);

/// One SSE event with an `event:` line, as the Responses API sends them.
std::string named_sse_event(std::string_view type, const nlohmann::ordered_json& data);

}  // namespace smartlb::sim
