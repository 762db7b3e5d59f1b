#include "smartlb/websocket/frame_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb::websocket {
namespace frame_parser_test {  // named, not anonymous: tests/CMakeLists.txt

// Records what the parser reports, as text: "H<opcode><fin?F:->[M]<length>", "P<bytes>", "E<offset>".
struct Recorder : FrameSink {
  std::vector<std::string> events;
  std::string payload;  // every payload byte, joined
  void on_header(const FrameHeader& h) override {
    events.push_back("H" + std::to_string(static_cast<int>(h.opcode)) + (h.fin ? "F" : "-") +
                     (h.masked ? "M" : "") + std::to_string(h.length));
  }
  void on_payload(std::string_view bytes) override {
    events.push_back("P" + std::string(bytes));
    payload.append(bytes);
  }
  void on_frame_end(std::size_t offset) override { events.push_back("E" + std::to_string(offset)); }
};

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

// A server's (unmasked) frame.
std::string server_frame(int first_byte, const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>(first_byte));
  if (payload.size() < 126) {
    f.push_back(static_cast<char>(payload.size()));
  } else if (payload.size() < 65536) {
    f += bytes({126, static_cast<int>(payload.size() >> 8), static_cast<int>(payload.size() & 0xff)});
  } else {
    f.push_back(127);
    for (int i = 7; i >= 0; --i) f.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xff));
  }
  return f + payload;
}

TEST(FrameParser, ReadsAnUnmaskedTextFrameWhole) {
  FrameParser p(Sender::Server);
  Recorder r;
  ASSERT_TRUE(p.feed(server_frame(0x81, "hello"), r));
  EXPECT_EQ(r.events, (std::vector<std::string>{"H1F5", "Phello", "E7"}));
  EXPECT_TRUE(p.at_boundary());
  EXPECT_EQ(p.frames(), 1u);
}

TEST(FrameParser, ReadsAMaskedClientFrameWithItsMaskAndLeavesThePayloadMasked) {
  FrameParser p(Sender::Client);
  struct MaskSeen : Recorder {
    std::array<std::uint8_t, 4> mask{};
    void on_header(const FrameHeader& h) override {
      Recorder::on_header(h);
      mask = h.mask;
    }
  } r;
  const std::string frame = bytes({0x82, 0x83, 1, 2, 3, 4, 'a' ^ 1, 'b' ^ 2, 'c' ^ 3});
  ASSERT_TRUE(p.feed(frame, r));
  EXPECT_EQ(r.events.front(), "H2FM3");
  EXPECT_EQ(r.mask, (std::array<std::uint8_t, 4>{1, 2, 3, 4}));
  EXPECT_EQ(r.payload, bytes({'a' ^ 1, 'b' ^ 2, 'c' ^ 3}));
  EXPECT_EQ(r.events.back(), "E9");
}

TEST(FrameParser, Reads16And64BitLengths) {
  FrameParser p(Sender::Server);
  Recorder r;
  const std::string mid(300, 'm'), big(70000, 'b');
  ASSERT_TRUE(p.feed(server_frame(0x82, mid) + server_frame(0x82, big), r));
  ASSERT_EQ(r.events.size(), 6u);
  EXPECT_EQ(r.events[0], "H2F300");
  EXPECT_EQ(r.events[2], "E304");
  EXPECT_EQ(r.events[3], "H2F70000");
  EXPECT_EQ(r.events[5], "E" + std::to_string(304 + 10 + 70000));
  EXPECT_EQ(p.frames(), 2u);
}

TEST(FrameParser, SplitAnywhereGivesTheSameFramesAndPayload) {
  const std::string stream = server_frame(0x01, "frag") + server_frame(0x89, "ping") +
                             server_frame(0x80, "ment") + server_frame(0x82, std::string(200, 'x')) +
                             server_frame(0x88, bytes({0x03, 0xe8}));
  FrameParser whole(Sender::Server);
  Recorder expected;
  ASSERT_TRUE(whole.feed(stream, expected));
  for (std::size_t cut1 = 0; cut1 <= stream.size(); cut1 += 3)
    for (std::size_t cut2 = cut1; cut2 <= stream.size(); cut2 += 7) {
      FrameParser p(Sender::Server);
      Recorder r;
      ASSERT_TRUE(p.feed(stream.substr(0, cut1), r));
      ASSERT_TRUE(p.feed(stream.substr(cut1, cut2 - cut1), r));
      ASSERT_TRUE(p.feed(stream.substr(cut2), r));
      EXPECT_EQ(r.payload, expected.payload) << cut1 << "/" << cut2;
      EXPECT_EQ(p.frames(), 5u);
      EXPECT_TRUE(p.at_boundary());
    }
}

TEST(FrameParser, ByteByByteTheBoundaryIsKnownOnlyBetweenFrames) {
  const std::string stream = server_frame(0x81, "ab") + server_frame(0x8a, "");
  FrameParser p(Sender::Server);
  Recorder r;
  std::string boundaries;
  for (char c : stream) {
    ASSERT_TRUE(p.feed(std::string_view(&c, 1), r));
    boundaries.push_back(p.at_boundary() ? '|' : '.');
  }
  EXPECT_EQ(boundaries, "...|.|");  // after "ab", and after the empty pong
  EXPECT_EQ(r.events, (std::vector<std::string>{"H1F2", "Pa", "Pb", "E1", "H10F0", "E1"}));
}

TEST(FrameParser, RefusesWhatNoRelayableStreamHas) {
  const struct {
    Sender sender;
    std::string stream;
    FrameError error;
  } cases[] = {
      {Sender::Server, bytes({0xC1, 0x00}), FrameError::ReservedBits},  // RSV1: compression nobody agreed
      {Sender::Server, bytes({0x83, 0x00}), FrameError::UnknownOpcode},
      {Sender::Server, bytes({0x8B, 0x00}), FrameError::UnknownOpcode},
      {Sender::Server, bytes({0x09, 0x00}), FrameError::BadControl},  // a fragmented ping
      {Sender::Server, bytes({0x88, 126, 0, 126}), FrameError::BadControl},
      {Sender::Server, bytes({0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}), FrameError::LengthTooLarge},
      {Sender::Server, bytes({0x81, 0x80, 1, 2, 3, 4}), FrameError::Masking},
      {Sender::Client, bytes({0x81, 0x00}), FrameError::Masking},
      {Sender::Server, bytes({0x80, 0x00}), FrameError::Fragmentation},  // continuation of nothing
      {Sender::Server, bytes({0x01, 0x00, 0x81, 0x00}), FrameError::Fragmentation},
  };
  for (const auto& c : cases) {
    FrameParser p(c.sender);
    Recorder r;
    EXPECT_FALSE(p.feed(c.stream, r)) << to_string(c.error);
    EXPECT_EQ(p.error(), c.error) << to_string(p.error());
    EXPECT_FALSE(p.feed(server_frame(0x81, "x"), r)) << "a failed parser stays failed";
  }
}

TEST(FrameParser, ACloseFrameIsWhatTheParserReadsBack) {
  const std::array<std::uint8_t, 4> mask{0x11, 0x22, 0x33, 0x44};
  EXPECT_EQ(close_frame(1001), bytes({0x88, 0x02, 0x03, 0xE9}));
  EXPECT_EQ(close_frame(1001, &mask), bytes({0x88, 0x82, 0x11, 0x22, 0x33, 0x44, 0x03 ^ 0x11, 0xE9 ^ 0x22}));
  FrameParser p(Sender::Client);
  Recorder r;
  ASSERT_TRUE(p.feed(close_frame(1000, &mask), r));
  EXPECT_EQ(r.events.front(), "H8FM2");
}

}  // namespace frame_parser_test
}  // namespace smartlb::websocket
