#pragma once
// The WebSocket side of smartlb-sim's Realtime API: completes an admitted handshake (with the
// subprotocol the engine chose, no compression) and runs the session until either side
// closes, one JSON event per text frame; in echo mode every message is sent back at once,
// same bytes, same type, as one frame. Private to the server.

#include "smartlb/sim/sim_engine.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace smartlb::sim {

boost::asio::awaitable<void> serve_realtime(
    SimEngine& engine, boost::beast::tcp_stream stream,
    boost::beast::http::request<boost::beast::http::string_body> request, RealtimeAdmission admission);

}  // namespace smartlb::sim
