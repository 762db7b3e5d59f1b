#pragma once
// The WebSocket side of smartlb-sim's Responses API WebSocket mode: completes an admitted
// handshake (no compression) and answers each client message with the events of
// responses_socket_turn, one JSON event per text frame, until either side closes. Private to
// the server.

#include "smartlb/sim/sim_engine.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace smartlb::sim {

boost::asio::awaitable<void> serve_responses_socket(
    SimEngine& engine, boost::beast::tcp_stream stream,
    boost::beast::http::request<boost::beast::http::string_body> request, SimRequest handshake);

}  // namespace smartlb::sim
