#pragma once
// A backend whose streamed answers hold their last event until a test opens a gate: a stream
// that stays in flight (max_in_flight's tests). A request that does not stream gets "ok".
#include "mock_backend.hpp"

namespace smartlb::testing {

inline MockBackend::Handler stream_held_before_last_event(GatePtr last_event) {
  return [last_event](const SeenRequest& r) {
    if (r.body.find("\"stream\":true") == std::string::npos) return MockReply{200, {}, "ok"};
    MockReply reply{200, {{"content-type", "text/event-stream"}}, ""};
    reply.events = {"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", "data: [DONE]\n\n"};
    reply.wait_before[1] = last_event;
    return reply;
  };
}

}  // namespace smartlb::testing
