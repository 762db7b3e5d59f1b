#include "smartlb/websocket/relay_direction.hpp"

namespace smartlb::websocket {

bool RelayDirection::feed(std::string_view piece, std::string_view& out) {
  ended_here = false;
  if (!rewriter) {
    out = piece;
    return parser.feed(piece, *this);
  }
  rewritten_.clear();
  const bool framed = rewriter->feed(piece, rewritten_);
  out = rewritten_;
  ended_here = rewriter->ended_here();
  last_end = rewriter->last_end();
  return framed;
}

void RelayDirection::on_header(const FrameHeader& h) {
  inspecting_ = reads_usage && h.fin && h.opcode == Opcode::Text;
  prefix_only_ = inspecting_ && h.length > kInspectedFrameBytes;
  text_.clear();
}

void RelayDirection::on_payload(std::string_view bytes) {
  if (!inspecting_) return;
  if (prefix_only_) bytes = bytes.substr(0, kFramePrefixBytes - std::min(text_.size(), kFramePrefixBytes));
  text_.append(bytes);
}

void RelayDirection::on_frame_end(std::size_t offset) {
  last_end = offset;
  ended_here = true;
  if (!inspecting_) return;
  inspecting_ = false;
  if (prefix_only_) {
    if (starts_as_response_end(text_)) found.push_back({false, {}, true});
    return;
  }
  if (auto u = response_done_usage(text_))
    found.push_back({false, *u});
  else if (is_response_created(text_))
    found.push_back({true, {}});
  else if (is_response_end(text_))
    found.push_back({false, {}, true});
}

std::optional<std::chrono::nanoseconds> SessionUsage::learn(const UsageEvent& e, TimePoint now) {
  if (e.created) {
    began_ = now;
    return std::nullopt;
  }
  if (e.ended) {  // no usage to add, nor a time to learn from
    began_.reset();
    return std::nullopt;
  }
  seen_ = true;
  input_tokens_ += e.usage.input_tokens;
  output_tokens_ += e.usage.output_tokens;
  if (model_.empty()) model_ = e.usage.model;
  std::optional<std::chrono::nanoseconds> took;
  if (began_) took = std::chrono::duration_cast<std::chrono::nanoseconds>(now - *began_);
  began_.reset();
  return took;
}

}  // namespace smartlb::websocket
