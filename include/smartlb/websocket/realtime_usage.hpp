#pragma once
// Token usage of the WebSocket APIs: each Realtime `response.done` event, and each Responses
// `response.completed` event of the Responses API's WebSocket mode, carries its response's usage
// (`response.usage.input_tokens`, `output_tokens`). Read from one whole text message.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::websocket {

struct RealtimeUsage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::string model;  // the response's `model`, when it names one
};

// The usage of a `response.done` event; nullopt for any other text (another event, not JSON,
// no usage).
std::optional<RealtimeUsage> response_done_usage(std::string_view text);
// The usage of a Responses `response.completed` event; nullopt for any other text.
std::optional<RealtimeUsage> response_completed_usage(std::string_view text);

// Whether `text` is a `response.created` event: a response begins (its end, response.done, tells
// how long it took).
bool is_response_created(std::string_view text);

// Server text frames up to this size are read for usage; larger ones (audio) are not.
inline constexpr std::size_t kInspectedFrameBytes = 64 * 1024;

}  // namespace smartlb::websocket
