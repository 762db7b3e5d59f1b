#pragma once
// A WebSocket byte stream with its small text messages edited on the way (the Responses API's
// WebSocket mode: ids tagged in the backend's events, untagged in the client's requests). Every
// other frame goes on as it arrives, payload bytes as they are; an unfragmented text frame up to
// the limit is held whole, unmasked (a client's), handed to the editor, and goes on as the
// editor says: as it was, with a new payload (re-masked with its own mask, its length header
// rewritten), or not at all. Fragmented or larger text messages are never edited. No I/O.
#include <cstddef>
#include <string>
#include <string_view>

#include "smartlb/websocket/frame_parser.hpp"

namespace smartlb::websocket {

// What becomes of one whole text message.
enum class Edit : std::uint8_t { Keep, Replace, Drop };

class TextEditor {
 public:
  virtual ~TextEditor() = default;
  // `text`: the message's payload, unmasked. Replace: `out` holds the new payload.
  virtual Edit edit(std::string_view text, std::string& out) = 0;
};

// The header of a frame like `h` (its fin, opcode, mask) with payload length `length`, in the
// shortest length form.
void append_frame_header(const FrameHeader& h, std::uint64_t length, std::string& out);

class FrameRewriter final : private FrameSink {
 public:
  FrameRewriter(Sender sender, std::size_t edited_limit, TextEditor& editor)
      : parser_(sender), limit_(edited_limit), editor_(editor) {}

  // Appends to `out` what `in` makes ready. A frame header split across pieces goes out once
  // whole; a held text frame once its last byte came. False at the first framing error (the
  // parser's), with `out` holding what went before it.
  bool feed(std::string_view in, std::string& out);

  // No frame begun and not ended: a frame may be inserted into the output here.
  bool at_boundary() const { return parser_.at_boundary(); }
  FrameError error() const { return parser_.error(); }
  // After feed: whether a frame ended in that piece, and where in `out` the last one did.
  bool ended_here() const { return ended_here_; }
  std::size_t last_end() const { return last_end_; }
  std::size_t held_bytes() const { return held_.size(); }

 private:
  void on_header(const FrameHeader& h) override;
  void on_payload(std::string_view bytes) override;
  void on_frame_end(std::size_t offset) override;

  FrameParser parser_;
  std::size_t limit_;
  TextEditor& editor_;
  std::string* out_ = nullptr;  // during feed
  FrameHeader header_;          // of the frame under way
  bool holding_ = false;        // it is a text frame held for the editor
  std::string held_;            // its payload so far (as on the wire)
  std::string text_, edited_;   // scratch: the unmasked payload, the editor's
  bool ended_here_ = false;
  std::size_t last_end_ = 0;
};

}  // namespace smartlb::websocket
