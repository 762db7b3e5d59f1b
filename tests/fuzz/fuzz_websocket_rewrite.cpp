// FrameRewriter (websocket/frame_rewriter): a WebSocket stream whose small whole text frames are
// edited on the way (the Responses API's WebSocket mode). Input: one byte choosing the sender,
// the piece size and the size limit of edited frames, then the stream. The editor drops a text
// starting with '0', keeps one starting with '1', and doubles any other (lengths cross the 7-,
// 16- and 64-bit forms).
// Invariants: fed in pieces it writes the same bytes and calls the editor on the same texts as
// fed whole, and fails at the same error; what it writes is valid framing for the same sender,
// with one frame less per dropped one; fed again through a rewriter that keeps everything, what
// it wrote comes out byte for byte (headers are written in one canonical form).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/websocket/frame_rewriter.hpp"

namespace {

using namespace smartlb::websocket;

struct Doubler : TextEditor {
  std::vector<std::string> seen;
  std::size_t dropped = 0;
  Edit edit(std::string_view text, std::string& out) override {
    seen.emplace_back(text);
    if (!text.empty() && text[0] == '0') {
      ++dropped;
      return Edit::Drop;
    }
    if (!text.empty() && text[0] == '1') return Edit::Keep;
    out.append(text).append(text);
    return Edit::Replace;
  }
};

struct KeepAll : TextEditor {
  Edit edit(std::string_view, std::string&) override { return Edit::Keep; }
};

struct Count : FrameSink {
  void on_header(const FrameHeader&) override {}
  void on_payload(std::string_view) override {}
  void on_frame_end(std::size_t) override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Sender sender = (data[0] & 1) ? Sender::Client : Sender::Server;
  const std::size_t piece = 1 + ((data[0] >> 1) & 0x3f);     // 1..64 bytes
  const std::size_t limit = (data[0] & 0x80) ? 200 : 70000;  // below and above the 16-bit form
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  Doubler whole_editor;
  FrameRewriter whole(sender, limit, whole_editor);
  std::string whole_out;
  const bool ok = whole.feed(stream, whole_out);

  Doubler split_editor;
  FrameRewriter split(sender, limit, split_editor);
  std::string split_out;
  bool split_ok = true;
  for (std::size_t at = 0; at < stream.size() && split_ok; at += piece)
    split_ok = split.feed(stream.substr(at, piece), split_out);
  if (split_ok != ok || split.error() != whole.error() || split_out != whole_out ||
      split_editor.seen != whole_editor.seen)
    __builtin_trap();

  // What came out is framing of the same sender, every frame but the dropped ones.
  FrameParser in_parser(sender), out_parser(sender);
  Count sink;
  in_parser.feed(stream, sink);
  if (!out_parser.feed(whole_out, sink)) __builtin_trap();
  if (out_parser.frames() + whole_editor.dropped != in_parser.frames()) __builtin_trap();
  if (ok && whole.at_boundary() && !out_parser.at_boundary()) __builtin_trap();

  KeepAll keep;
  FrameRewriter again(sender, limit, keep);
  std::string again_out;
  if (!again.feed(whole_out, again_out) || again_out != whole_out) __builtin_trap();
  return 0;
}
