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

// Whether `text` is an event that ends a response, whatever it carries: Realtime's
// `response.done`, Responses' `response.completed`, `response.failed`, `response.incomplete`.
bool is_response_end(std::string_view text);
// The same for a frame too large to be read whole, from its first bytes (up to kFramePrefixBytes):
// its `type`, when it comes first, as OpenAI writes its events.
bool starts_as_response_end(std::string_view prefix);

// Server text frames up to this size are read for usage; larger ones (audio) are not, but their
// first kFramePrefixBytes are looked at for a response's end.
inline constexpr std::size_t kInspectedFrameBytes = 64 * 1024;
inline constexpr std::size_t kFramePrefixBytes = 256;

}  // namespace smartlb::websocket
