// Text messages edited in a passing WebSocket stream (include/smartlb/websocket/frame_rewriter.hpp).
#include "smartlb/websocket/frame_rewriter.hpp"

namespace smartlb::websocket {
namespace {

constexpr std::size_t kKeptCapacity = 64 * 1024;

// RFC 6455 section 5.3: byte i of a masked payload is XORed with mask[i % 4] (both ways).
void apply_mask(std::string& bytes, const std::array<std::uint8_t, 4>& mask) {
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(bytes[i] ^ mask[i % 4]);
}

}  // namespace

void append_frame_header(const FrameHeader& h, std::uint64_t length, std::string& out) {
  out.push_back(static_cast<char>((h.fin ? 0x80 : 0) | static_cast<std::uint8_t>(h.opcode)));
  const std::uint8_t mask_bit = h.masked ? 0x80 : 0;
  if (length <= 125) {
    out.push_back(static_cast<char>(mask_bit | length));
  } else if (length <= 0xffff) {
    out.push_back(static_cast<char>(mask_bit | 126));
    for (int shift = 8; shift >= 0; shift -= 8) out.push_back(static_cast<char>((length >> shift) & 0xff));
  } else {
    out.push_back(static_cast<char>(mask_bit | 127));
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((length >> shift) & 0xff));
  }
  if (h.masked)
    for (const std::uint8_t b : h.mask) out.push_back(static_cast<char>(b));
}

bool FrameRewriter::feed(std::string_view in, std::string& out) {
  out_ = &out;
  ended_here_ = false;
  const bool ok = parser_.feed(in, *this);
  out_ = nullptr;
  return ok;
}

void FrameRewriter::on_header(const FrameHeader& h) {
  header_ = h;
  holding_ = h.fin && h.opcode == Opcode::Text && h.length <= limit_;
  held_.clear();
  // Not held: the header goes at once (the parser saw it whole), the payload as it comes.
  if (!holding_) append_frame_header(h, h.length, *out_);
}

void FrameRewriter::on_payload(std::string_view bytes) {
  if (holding_)
    held_.append(bytes);
  else
    out_->append(bytes);
}

void FrameRewriter::on_frame_end(std::size_t) {
  if (holding_) {
    holding_ = false;
    text_ = held_;
    if (header_.masked) apply_mask(text_, header_.mask);
    edited_.clear();
    switch (editor_.edit(text_, edited_)) {
      case Edit::Keep:
        append_frame_header(header_, held_.size(), *out_);
        out_->append(held_);
        break;
      case Edit::Replace:
        if (header_.masked) apply_mask(edited_, header_.mask);
        append_frame_header(header_, edited_.size(), *out_);
        out_->append(edited_);
        break;
      case Edit::Drop:
        break;
    }
    held_.clear();
    // A large message's buffers are not kept for the session's life: most events are small.
    if (held_.capacity() > kKeptCapacity) {
      std::string().swap(held_);
      std::string().swap(text_);
      std::string().swap(edited_);
    }
  }
  ended_here_ = true;
  last_end_ = out_->size();
}

}  // namespace smartlb::websocket
