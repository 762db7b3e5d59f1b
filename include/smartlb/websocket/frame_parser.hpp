#pragma once
// RFC 6455 frame headers read out of a byte stream as it passes, fed in arbitrary pieces: the
// relay learns where each frame starts and ends (to count them, to inject a close between two
// frames, to read a small text frame) while the bytes themselves go on unchanged.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace smartlb::websocket {

enum class Opcode : std::uint8_t { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

struct FrameHeader {
  bool fin = false;
  Opcode opcode = Opcode::Continuation;
  bool masked = false;
  std::array<std::uint8_t, 4> mask{};
  std::uint64_t length = 0;  // of the payload
};

// What is wrong with a stream that is not WebSocket framing smartlb can relay. No extension is
// negotiated (the handshake drops Sec-WebSocket-Extensions), so a reserved bit is an error.
enum class FrameError : std::uint8_t {
  None,
  ReservedBits,    // RSV1-3 set
  UnknownOpcode,   // 3-7, 11-15
  BadControl,      // a close, ping or pong fragmented or longer than 125 bytes
  LengthTooLarge,  // a 64-bit length with its top bit set
  Masking,         // a client's frame unmasked, or a server's masked
  Fragmentation,   // a continuation with no message begun, or a new message inside one
};
std::string_view to_string(FrameError e);

// Told of what the parser sees, in stream order. `offset` is where, in the piece just fed, the
// event's bytes end (a frame's end: the first byte after it).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void on_header(const FrameHeader& h) = 0;
  // Payload bytes as they arrive (masked as they are on the wire).
  virtual void on_payload(std::string_view bytes) = 0;
  virtual void on_frame_end(std::size_t offset) = 0;
};

// Which side sent the stream: a client's frames must be masked, a server's must not (RFC 6455
// section 5.1).
enum class Sender : std::uint8_t { Client, Server };

class FrameParser {
 public:
  explicit FrameParser(Sender sender) : sender_(sender) {}

  // The next bytes of the stream. False at the first violation (error() says which); nothing
  // after it is looked at, and every later call is false too.
  bool feed(std::string_view bytes, FrameSink& sink);
  // No frame begun and not ended: a frame may be inserted here.
  bool at_boundary() const { return state_ == State::Header && have_ == 0; }
  FrameError error() const { return error_; }
  std::uint64_t frames() const { return frames_; }

 private:
  enum class State : std::uint8_t { Header, Payload, Failed };
  // Reads the header collected so far: 0 while it is incomplete, else its size; an invalid
  // one fails the parser (reject).
  std::size_t parse_header(FrameHeader& h);
  std::size_t reject(FrameError e) {
    error_ = e;
    state_ = State::Failed;
    return 1;
  }

  Sender sender_;
  State state_ = State::Header;
  FrameError error_ = FrameError::None;
  std::array<std::uint8_t, 14> header_{};  // the longest: 2 + 8 (length) + 4 (mask)
  std::size_t have_ = 0;                   // header bytes collected
  std::uint64_t remaining_ = 0;            // payload bytes of the current frame still to come
  bool in_message_ = false;                // a fragmented data message awaits its continuation
  std::uint64_t frames_ = 0;               // frames ended
};

// A close frame with `code` and no reason; masked with `mask` when a client sends it.
std::string close_frame(std::uint16_t code, const std::array<std::uint8_t, 4>* mask = nullptr);

}  // namespace smartlb::websocket
