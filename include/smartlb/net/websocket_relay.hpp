#pragma once
// A WebSocket session after the backend's verified 101 (docs/stateful-apis.md, Realtime): the
// client's 101, then a frame-aware byte relay both ways. Bytes go on as they arrive, as they are
// (never unmasked, re-masked or gathered into messages): one bounded buffer per direction, the
// next read only once the last write is done. Frame headers are read as the bytes pass
// (websocket/frame_parser) to count frames, to put a close between two frames when the session
// is closed by smartlb (idle, too long, a drain), and to read the usage of the backend's small
// unfragmented `response.done` text frames.
//
// The Responses API's WebSocket mode is the exception: its small unfragmented text messages
// are held whole and edited (websocket/responses_socket): ids tagged in the backend's events,
// untagged in the client's requests, and a request naming another resource's id answered with
// an `error` event instead of forwarded.
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/upstream.hpp"
#include "smartlb/net/websocket_session.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

struct ExchangeContext;
struct ForwardBuffers;

// Writes the client's 101 (the backend's fields but those of the handshake itself, which are
// smartlb's to answer), then relays until both sides are done. What the session used (its
// response.done usage, summed) goes into `rec`, with status 101; each response is told to
// `session.responses` as it ends. Once the client has its 101, the request's texts in `buffers`
// are freed: the session is the connection's last exchange, and may last an hour.
Task<void> relay_websocket(const ExchangeContext& ctx, io::TimedSocket& client, UpstreamPtr upstream,
                           const WebSocketSession& session, telemetry::RequestRecord& rec,
                           ForwardBuffers& buffers);

}  // namespace smartlb::net
