#pragma once
// One direction of a relayed WebSocket session (net/websocket_relay moves its bytes): where its
// frames begin and end, whether smartlb's own close went or is to go that way, the usage that a
// backend's small text frames carry, and smartlb's own frames that wait for a boundary. Pure:
// the relay feeds it each read and writes what it says.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/websocket/frame_parser.hpp"
#include "smartlb/websocket/frame_rewriter.hpp"
#include "smartlb/websocket/realtime_usage.hpp"

namespace smartlb::websocket {

// A response.created, a response.done with its usage, or (`ended`) an event that ended a
// response without usage smartlb could read (a failed one, or a frame too large to read).
struct UsageEvent {
  bool created = false;
  RealtimeUsage usage;
  bool ended = false;
};

struct RelayDirection final : FrameSink {
  explicit RelayDirection(Sender s) : parser(s) {}

  // Reads one read's bytes; false on bad framing. `out` is what goes on: the bytes, or what the
  // rewriter made of them. Frames that ended in them: ended_here, last_end; usage: found.
  bool feed(std::string_view piece, std::string_view& out);
  bool at_boundary() const { return rewriter ? rewriter->at_boundary() : parser.at_boundary(); }
  FrameError error() const { return rewriter ? rewriter->error() : parser.error(); }

  FrameParser parser;
  bool writing = false;           // a write to this direction's destination is under way
  bool close_pending = false;     // smartlb's close goes at the next frame boundary
  bool close_sent = false;        // it went: nothing more goes this way
  bool ended = false;             // its source is done
  bool clean_end = false;         // ... by a protocol error, with its destination between frames
  std::size_t last_end = 0;       // in the piece fed last: after the last frame that ended
  bool ended_here = false;        // ... when one did
  bool reads_usage = false;       // a backend's small unfragmented text frames are read for usage
  std::vector<UsageEvent> found;  // in the piece fed last, in order
  // A Responses socket: its frames go through this instead (held whole where edited). On the
  // heap: a Realtime session, which has none, holds nothing for it (an idle session's size is
  // what thousands of them cost).
  std::unique_ptr<FrameRewriter> rewriter;
  std::string injected;  // smartlb's own frames for this destination, at its next boundary

 private:
  void on_header(const FrameHeader& h) override;
  void on_payload(std::string_view bytes) override;
  void on_frame_end(std::size_t offset) override;

  bool inspecting_ = false;   // the frame passing is read for usage
  bool prefix_only_ = false;  // ... only its first kFramePrefixBytes (too large to read whole)
  std::string text_;          // ... and its text so far
  std::string rewritten_;     // what the rewriter made of the last piece
};

// What a session's responses used, summed as their response.done events pass.
class SessionUsage {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // An event seen at `now`; for a response.done, how long since its response.created (none
  // when that was not seen).
  std::optional<std::chrono::nanoseconds> learn(const UsageEvent& e, TimePoint now);

  bool seen() const { return seen_; }
  std::int64_t input_tokens() const { return input_tokens_; }
  std::int64_t output_tokens() const { return output_tokens_; }
  const std::string& model() const { return model_; }  // the first a response named

 private:
  bool seen_ = false;
  std::int64_t input_tokens_ = 0, output_tokens_ = 0;
  std::string model_;
  std::optional<TimePoint> began_;  // the last response.created
};

}  // namespace smartlb::websocket
