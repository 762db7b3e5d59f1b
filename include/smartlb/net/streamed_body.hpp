#pragma once
// A request body too large to buffer (docs/stateful-apis.md, "Large uploads"): the client
// session leaves it unread, the forwarder routes the request on its head, and this moves the
// body from the client to the one backend chosen, through the client connection's read buffer
// (a fixed size), a read at a time: back-pressure both ways, and memory per upload bounded.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "smartlb/http1/http1_parser.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/exchange.hpp"  // StreamEnd
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {

struct StreamedBody {
  StreamedBody(io::TimedSocket& c, beast::flat_buffer& b, http1::RequestReader& p)
      : client(c), buffer(b), parser(p) {}
  io::TimedSocket& client;
  beast::flat_buffer& buffer;    // the client connection's: the next body bytes may be in it already
  http1::RequestReader& parser;  // past the head (and past `prefix`)
  std::string prefix;            // body bytes read already (a chunked body's start): sent first
  // The client's Content-Length, sent as it is; none: the body was chunked, and goes chunked.
  std::optional<std::uint64_t> length;
  std::chrono::seconds pause_timeout{100};  // each wait for the client's next bytes
  bool started = false;                     // the first body byte left for a backend: no failover from here

  // Whether body bytes are still to be read from the client (its connection cannot carry
  // another request until they are).
  bool unread() const { return !parser.is_done(); }
  // The request head's field that frames the body upstream, appended to `head`.
  void append_framing(std::string& head) const;
};

// Writes `buffers` (empty ones add nothing) to a backend, within `timeout`.
Task<error_code> write_upstream(UpstreamConnection& conn, const std::array<asio::const_buffer, 3>& buffers,
                                std::chrono::seconds timeout);

// Sends the body (prefix first) to `conn`, whose request head has gone; each write to it
// waits at most `upstream_timeout`. Marks `body.started` before the first byte.
Task<StreamEnd> stream_body(StreamedBody& body, UpstreamConnection& conn,
                            std::chrono::seconds upstream_timeout);

}  // namespace smartlb::net
