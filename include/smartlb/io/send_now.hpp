#pragma once
// A write that never waits: what the socket's send buffer takes now, for a caller that goes on
// without a coroutine when it takes all (net/upstream_exchange_committed.cpp: a woken event
// stream's rounds), and hands the rest to an asynchronous write otherwise.
#include <span>
#include <string>

#include "smartlb/io/beast.hpp"

namespace smartlb::io {

// Sends `buffers` on `s` with one sendmsg() (MSG_DONTWAIT, no SIGPIPE). Returns the bytes sent:
// fewer than the buffers hold when the send buffer filled (`ec` clear, or would_block when it took
// nothing); `ec` is the socket's error otherwise (the peer gone).
std::size_t send_now(Socket& s, std::span<const asio::const_buffer> buffers, error_code& ec);

// What send_now did not send: the bytes of `buffers` past the first `sent`, appended to `rest`.
void append_unsent(std::span<const asio::const_buffer> buffers, std::size_t sent, std::string& rest);

}  // namespace smartlb::io
