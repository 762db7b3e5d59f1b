// RFC 6455 section 5.2, incrementally (include/smartlb/websocket/frame_parser.hpp).
#include "smartlb/websocket/frame_parser.hpp"

#include <algorithm>

namespace smartlb::websocket {
namespace {

bool is_control(Opcode op) { return (static_cast<std::uint8_t>(op) & 0x8) != 0; }

bool is_known(std::uint8_t op) { return op <= 2 || (op >= 8 && op <= 10); }

}  // namespace

std::string_view to_string(FrameError e) {
  switch (e) {
    case FrameError::None:
      return "none";
    case FrameError::ReservedBits:
      return "reserved bits set";
    case FrameError::UnknownOpcode:
      return "unknown opcode";
    case FrameError::BadControl:
      return "control frame fragmented or over 125 bytes";
    case FrameError::LengthTooLarge:
      return "64-bit length with its top bit set";
    case FrameError::Masking:
      return "masking against the sender's role";
    case FrameError::Fragmentation:
      return "continuation out of place";
  }
  return "?";
}

std::size_t FrameParser::parse_header(FrameHeader& h) {
  if (have_ < 2) return 0;
  const std::uint8_t b0 = header_[0], b1 = header_[1];
  const std::uint8_t len7 = b1 & 0x7f;
  const std::size_t length_bytes = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
  h.masked = (b1 & 0x80) != 0;
  const std::size_t size = 2 + length_bytes + (h.masked ? 4 : 0);
  // The first two bytes decide everything but the length: fail as early as they allow.
  if ((b0 & 0x70) != 0) return reject(FrameError::ReservedBits);
  if (!is_known(b0 & 0x0f)) return reject(FrameError::UnknownOpcode);
  h.fin = (b0 & 0x80) != 0;
  h.opcode = static_cast<Opcode>(b0 & 0x0f);
  if (h.masked != (sender_ == Sender::Client)) return reject(FrameError::Masking);
  if (is_control(h.opcode) && (!h.fin || len7 > 125)) return reject(FrameError::BadControl);
  if (!is_control(h.opcode) && (h.opcode == Opcode::Continuation) != in_message_)
    return reject(FrameError::Fragmentation);
  if (have_ < size) return 0;
  std::uint64_t length = len7;
  if (length_bytes > 0) {
    length = 0;
    for (std::size_t i = 0; i < length_bytes; ++i) length = (length << 8) | header_[2 + i];
    if (length_bytes == 8 && (header_[2] & 0x80) != 0) return reject(FrameError::LengthTooLarge);
  }
  h.length = length;
  if (h.masked) std::copy_n(header_.begin() + 2 + length_bytes, 4, h.mask.begin());
  return size;
}

bool FrameParser::feed(std::string_view bytes, FrameSink& sink) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (state_ == State::Failed) return false;
    if (state_ == State::Header) {
      // One byte at a time into the header: a header is at most 14 bytes, and the bytes that
      // complete it are known only once the second one is read.
      header_[have_++] = static_cast<std::uint8_t>(bytes[at++]);
      FrameHeader h;
      const std::size_t size = parse_header(h);
      if (state_ == State::Failed) return false;
      if (size == 0) continue;
      have_ = 0;
      if (!is_control(h.opcode)) in_message_ = !h.fin;
      sink.on_header(h);
      remaining_ = h.length;
      if (remaining_ == 0) {
        ++frames_;
        sink.on_frame_end(at);
      } else {
        state_ = State::Payload;
      }
      continue;
    }
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size() - at));
    sink.on_payload(bytes.substr(at, n));
    at += n;
    remaining_ -= n;
    if (remaining_ == 0) {
      state_ = State::Header;
      ++frames_;
      sink.on_frame_end(at);
    }
  }
  return state_ != State::Failed;
}

std::string close_frame(std::uint16_t code, const std::array<std::uint8_t, 4>* mask) {
  std::string out;
  out.push_back(static_cast<char>(0x88));  // FIN, close
  out.push_back(static_cast<char>((mask ? 0x80 : 0x00) | 2));
  std::array<std::uint8_t, 2> payload{static_cast<std::uint8_t>(code >> 8),
                                      static_cast<std::uint8_t>(code & 0xff)};
  if (mask) {
    for (const std::uint8_t b : *mask) out.push_back(static_cast<char>(b));
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] ^= (*mask)[i % 4];
  }
  for (const std::uint8_t b : payload) out.push_back(static_cast<char>(b));
  return out;
}

}  // namespace smartlb::websocket
