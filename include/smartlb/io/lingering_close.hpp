#pragma once
// Closing a connection whose client may still be sending: a request refused before its body was
// read (too large, no room to buffer it, a bad head), or one whose backend answered before it had
// the whole upload. A plain close with unread bytes in the socket makes the kernel answer them
// with a reset, and the client's next send then fails (or its read does, with the answer already
// in its buffer), so it never sees why it was refused. As nginx's `lingering_close` and Apache's
// lingering close do: the sending side closes (the answer is all written), what still arrives is
// read and dropped until the client closes or `limit` passes, and only then does the socket close.
#include <chrono>

#include "smartlb/io/beast.hpp"
#include "smartlb/io/timed_socket.hpp"

namespace smartlb::io {

// As long as a client may take to finish sending what it started (nginx: lingering_timeout 5 s).
inline constexpr std::chrono::seconds kLingerLimit{5};

// Shuts the send side, drains the socket into `scratch` (its bytes are dropped), then closes it.
Task<> close_lingering(TimedSocket& stream, beast::flat_buffer& scratch,
                       std::chrono::seconds limit = kLingerLimit);

}  // namespace smartlb::io
