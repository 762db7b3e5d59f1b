#pragma once
// What a client is told when no backend can take its request: 429 when some backend is rate
// limited or at its declared quota (the client should slow down), 404 when every backend said
// the deployment or model is not there (OpenAI's model_not_found: retrying would not help),
// 502 when every attempt failed otherwise, 503 when nothing could even be tried; but for the
// 404, with the time until the soonest backend comes back, so that clients (the OpenAI SDKs
// honour it) retry then. 503 without a time when an operator took every backend out (drained,
// disabled, a cooldown held until lifted): nobody knows when one comes back.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/routing/backend_states.hpp"

namespace smartlb::routing {

struct UnavailableAnswer {
  unsigned status = 503;
  std::string_view type;  // OpenAI's error.type
  std::string_view code;  // OpenAI's error.code
  std::string message;
  std::optional<std::chrono::milliseconds> retry_after{std::chrono::milliseconds(1000)};  // none for a 404
};

// `attempts`: how many backends this request was sent to; `deployment` may be empty;
// `resource`: the resource a stateful request is pinned to (its objects live there), if any;
// `rate_limited`: one of its attempts was answered 429 (a 429 still, when that backend's short
// Retry-After has already passed: it said "slow down", not "failed").
UnavailableAnswer answer_unavailable(const Unavailability& u, std::size_t attempts,
                                     std::string_view deployment, std::string_view resource = {},
                                     bool rate_limited = false);

}  // namespace smartlb::routing
