// FrameParser (websocket/frame_parser): frame headers read out of the bytes a client or a
// backend sends over a relayed WebSocket. Input: one byte choosing the sender and the piece
// size, then the stream.
// Invariants: fed in pieces it reports the same headers, payload bytes, frame ends and error
// as fed whole; every frame's payload is exactly its header's length; a frame end is reported
// at the offset of the piece where the frame ended; at_boundary() holds after a frame ends and
// not inside one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/websocket/frame_parser.hpp"

namespace {

using namespace smartlb::websocket;

struct Seen : FrameSink {
  std::string log;      // headers and ends, in order
  std::string payload;  // every payload byte
  std::uint64_t expected = 0, got = 0;
  std::size_t piece_size = 0;  // of the piece being fed
  bool ended = false;          // a frame ended in the piece being fed ...
  std::size_t end_offset = 0;  // ... the last one here
  void on_header(const FrameHeader& h) override {
    if (got != expected) __builtin_trap();  // a new frame before the last one's payload ended
    log += 'H';
    log += static_cast<char>(static_cast<int>(h.opcode) + (h.fin ? 16 : 0) + (h.masked ? 32 : 0));
    log += std::to_string(h.length);
    expected = h.length;
    got = 0;
  }
  void on_payload(std::string_view bytes) override {
    got += bytes.size();
    if (got > expected) __builtin_trap();
    payload.append(bytes);
  }
  void on_frame_end(std::size_t offset) override {
    if (got != expected || offset > piece_size) __builtin_trap();
    log += 'E';
    ended = true;
    end_offset = offset;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Sender sender = (data[0] & 1) ? Sender::Client : Sender::Server;
  const std::size_t piece = 1 + (data[0] >> 1);  // 1..128 bytes
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  FrameParser whole(sender);
  Seen all;
  all.piece_size = stream.size();
  const bool ok = whole.feed(stream, all);
  if (ok != (whole.error() == FrameError::None)) __builtin_trap();

  FrameParser pieces(sender);
  Seen split;
  bool split_ok = true;
  for (std::size_t at = 0; at < stream.size() && split_ok; at += piece) {
    const std::string_view p = stream.substr(at, piece);
    split.piece_size = p.size();
    split.ended = false;
    split_ok = pieces.feed(p, split);
    // Between frames exactly when the piece's last byte ended one.
    if (split_ok && pieces.at_boundary() != (split.ended && split.end_offset == p.size())) __builtin_trap();
  }
  if (split_ok != ok || pieces.error() != whole.error() || split.log != all.log ||
      split.payload != all.payload || pieces.frames() != whole.frames() ||
      (ok && pieces.at_boundary() != whole.at_boundary()))
    __builtin_trap();
  return 0;
}
