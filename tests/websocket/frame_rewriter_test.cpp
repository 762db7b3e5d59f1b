#include "smartlb/websocket/frame_rewriter.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb::websocket {
namespace frame_rewriter_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr std::array<std::uint8_t, 4> kMask{0x12, 0x34, 0x56, 0x78};

std::string frame(Opcode op, bool fin, std::string payload, bool masked = false) {
  FrameHeader h;
  h.fin = fin;
  h.opcode = op;
  h.masked = masked;
  h.mask = kMask;
  std::string out;
  append_frame_header(h, payload.size(), out);
  if (masked)
    for (std::size_t i = 0; i < payload.size(); ++i)
      payload[i] = static_cast<char>(payload[i] ^ kMask[i % 4]);
  return out + payload;
}

// Upper-cases every text it is given, drops "drop", keeps "keep"; remembers what it saw.
struct Shouter : TextEditor {
  std::vector<std::string> seen;
  Edit edit(std::string_view text, std::string& out) override {
    seen.emplace_back(text);
    if (text == "drop") return Edit::Drop;
    if (text == "keep") return Edit::Keep;
    for (const char c : text) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    out.append(std::string(130, '!'));  // past 125: the length takes the 16-bit form
    return Edit::Replace;
  }
};

std::string rewrite(FrameRewriter& r, std::string_view in) {
  std::string out;
  EXPECT_TRUE(r.feed(in, out));
  return out;
}

TEST(FrameRewriter, PassesWhatIsNotAWholeSmallTextFrameAsItCame) {
  Shouter editor;
  FrameRewriter r(Sender::Server, 1024, editor);
  const std::string stream = frame(Opcode::Binary, true, "bin") + frame(Opcode::Text, false, "frag") +
                             frame(Opcode::Ping, true, "p") + frame(Opcode::Continuation, true, "ment") +
                             frame(Opcode::Close, true, "\x03\xe8");
  EXPECT_EQ(rewrite(r, stream), stream);
  EXPECT_TRUE(editor.seen.empty());
  EXPECT_TRUE(r.at_boundary());
}

TEST(FrameRewriter, ReplacesAServerTextFrameWithItsNewLength) {
  Shouter editor;
  FrameRewriter r(Sender::Server, 1024, editor);
  const std::string out = rewrite(r, frame(Opcode::Text, true, "hello") + frame(Opcode::Binary, true, "b"));
  EXPECT_EQ(out,
            frame(Opcode::Text, true, "HELLO" + std::string(130, '!')) + frame(Opcode::Binary, true, "b"));
  ASSERT_EQ(editor.seen.size(), 1u);
  EXPECT_EQ(editor.seen[0], "hello");
}

TEST(FrameRewriter, UnmasksAClientFrameForTheEditorAndMasksTheNewPayloadWithItsMask) {
  Shouter editor;
  FrameRewriter r(Sender::Client, 1024, editor);
  const std::string out = rewrite(r, frame(Opcode::Text, true, "hello", true));
  ASSERT_EQ(editor.seen.size(), 1u);
  EXPECT_EQ(editor.seen[0], "hello");
  EXPECT_EQ(out, frame(Opcode::Text, true, "HELLO" + std::string(130, '!'), true));
}

TEST(FrameRewriter, KeepsTheFrameTheEditorKeeps) {
  Shouter editor;
  FrameRewriter r(Sender::Client, 1024, editor);
  const std::string in = frame(Opcode::Text, true, "keep", true);
  EXPECT_EQ(rewrite(r, in), in);
}

TEST(FrameRewriter, DropsTheFrameTheEditorDrops) {
  Shouter editor;
  FrameRewriter r(Sender::Server, 1024, editor);
  const std::string binary = frame(Opcode::Binary, true, "b");
  std::string out;
  ASSERT_TRUE(r.feed(frame(Opcode::Text, true, "drop") + binary, out));
  EXPECT_EQ(out, binary);
  EXPECT_TRUE(r.ended_here());
  EXPECT_EQ(r.last_end(), binary.size());
}

TEST(FrameRewriter, PassesATextFrameOverTheLimitUnedited) {
  Shouter editor;
  FrameRewriter r(Sender::Server, 4, editor);
  const std::string in = frame(Opcode::Text, true, "hello");
  EXPECT_EQ(rewrite(r, in), in);
  EXPECT_TRUE(editor.seen.empty());
}

TEST(FrameRewriter, FedByteByByteGivesWhatItGivesFedWhole) {
  const std::string stream =
      frame(Opcode::Text, true, "one", true) + frame(Opcode::Binary, true, "two", true) +
      frame(Opcode::Text, true, "drop", true) + frame(Opcode::Text, true, "three", true);
  Shouter whole_editor, split_editor;
  FrameRewriter whole(Sender::Client, 1024, whole_editor), split(Sender::Client, 1024, split_editor);
  const std::string expected = rewrite(whole, stream);
  std::string out;
  for (const char c : stream) {
    const std::size_t before = out.size();
    ASSERT_TRUE(split.feed(std::string_view(&c, 1), out));
    // Nothing of a held frame goes out before its end; a frame's end is at the output's end.
    if (split.ended_here()) {
      EXPECT_EQ(split.last_end(), out.size());
    }
    if (!split.at_boundary() && split.held_bytes() > 0) {
      EXPECT_EQ(out.size(), before);
    }
  }
  EXPECT_EQ(out, expected);
  EXPECT_EQ(split_editor.seen, whole_editor.seen);
}

TEST(FrameRewriter, StopsAtAFramingError) {
  Shouter editor;
  FrameRewriter r(Sender::Server, 1024, editor);
  std::string out;
  // A server's frame must not be masked.
  EXPECT_FALSE(r.feed(frame(Opcode::Binary, true, "ok") + frame(Opcode::Text, true, "x", true), out));
  EXPECT_EQ(r.error(), FrameError::Masking);
  EXPECT_EQ(out, frame(Opcode::Binary, true, "ok"));
}

TEST(FrameHeaderEncoding, UsesTheShortestLengthForm) {
  FrameHeader h;
  h.fin = true;
  h.opcode = Opcode::Binary;
  std::string out;
  append_frame_header(h, 125, out);
  EXPECT_EQ(out, std::string("\x82\x7d", 2));
  out.clear();
  append_frame_header(h, 126, out);
  EXPECT_EQ(out, std::string("\x82\x7e\x00\x7e", 4));
  out.clear();
  append_frame_header(h, 65536, out);
  EXPECT_EQ(out, std::string("\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00", 10));
}

}  // namespace frame_rewriter_test
}  // namespace smartlb::websocket
