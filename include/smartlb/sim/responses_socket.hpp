#pragma once
// The Responses API's WebSocket mode in smartlb-sim, without sockets: each client message is a
// `response.create` that runs as the POST /v1/responses it stands for (stream: true), through the
// engine's own key check, faults, quota and response store (so a chain by previous_response_id
// works across the socket and HTTP on one sim); its stream's events come back one per text
// message. A message of another type, or a refused request, gets one `error` event.

#include "smartlb/sim/sim_engine.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace smartlb::sim {

/// The text messages that answer `message` on a socket opened by `handshake` (its path and
/// credential headers stand for the POST's).
std::vector<std::string> responses_socket_turn(SimEngine& engine, const SimRequest& handshake,
                                               std::string_view message);

}  // namespace smartlb::sim
