#pragma once
// The read buffer of an upstream connection while it carries an event stream. A stream waits
// long between events (seconds, for thousands of open streams), so the 16 KiB a response head
// and JSON body want would be most of what an open stream costs. A plain connection waits
// without its buffer's storage (net/upstream_exchange: read_body_bytes); the room it reads into
// is still what is set here, and a TLS connection's pending read holds it. Private to src/net.
#include "smartlb/io/beast.hpp"
#include "smartlb/net/spare_rooms.hpp"

namespace smartlb::net {

// What an event stream's buffer is cut to: room for a usual event (a chat completion chunk is
// 200-400 bytes; Azure's, with content filter results, up to ~800).
inline constexpr std::size_t kEventStreamBufferBytes = 1024;

// Called before each read of an event stream's body: the first time its buffer is empty, the
// buffer is cut to kEventStreamBufferBytes (`fitted` records that). A larger event fills it, and
// Beast's next read then doubles it; the room so grown stays for the events after, which are
// likely as large, so a stream of large events costs no allocation per event.
inline void fit_to_events(io::beast::flat_buffer& buffer, bool& fitted) {
  if (fitted || buffer.size() != 0) return;
  buffer.shrink_to_fit();  // empty: its storage is freed
  buffer.reserve(kEventStreamBufferBytes);
  fitted = true;
}

// The rooms of a worker's waiting streams' read buffers (a plain connection waits without one:
// net/upstream_exchange, read_body_bytes). Given up before each wait and taken back after it,
// a room is kept here rather than freed, so that the next stream that reads takes it instead of
// malloc's slow path (architecture.md, "Why it is fast").
// (A class of its own, not an alias: exchange_context.hpp declares it without this header.)
class EventRooms : public SpareRooms<64, 4 * kEventStreamBufferBytes> {};

}  // namespace smartlb::net
