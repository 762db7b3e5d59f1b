#include "smartlb/websocket/relay_direction.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb::websocket {
namespace relay_direction_test {  // named, not anonymous: tests/CMakeLists.txt

std::string server_text(std::string_view payload, bool fin = true) {
  FrameHeader h;
  h.fin = fin;
  h.opcode = Opcode::Text;
  std::string frame;
  append_frame_header(h, payload.size(), frame);
  frame.append(payload);
  return frame;
}

constexpr std::string_view kDone =
    R"({"type":"response.done","response":{"model":"gpt-4o-realtime","usage":{"input_tokens":12,"output_tokens":18}}})";

TEST(RelayDirection, ReadsTheUsageOfABackendsTextFramesAndWhereTheyEnd) {
  RelayDirection d(Sender::Server);
  d.reads_usage = true;
  const std::string created = server_text(R"({"type":"response.created"})");
  const std::string piece = created + server_text(kDone);
  std::string_view out;
  ASSERT_TRUE(d.feed(piece, out));
  EXPECT_EQ(out, piece) << "what goes on is what came";
  EXPECT_TRUE(d.ended_here);
  EXPECT_EQ(d.last_end, piece.size());
  ASSERT_EQ(d.found.size(), 2u);
  EXPECT_TRUE(d.found[0].created);
  EXPECT_EQ(d.found[1].usage.output_tokens, 18);
  EXPECT_TRUE(d.at_boundary());
}

TEST(RelayDirection, AFrameSplitAcrossReadsIsReadOnceWholeAndAFragmentedOneNotAtAll) {
  RelayDirection d(Sender::Server);
  d.reads_usage = true;
  const std::string frame = server_text(kDone);
  std::string_view out;
  ASSERT_TRUE(d.feed(std::string_view(frame).substr(0, 10), out));
  EXPECT_FALSE(d.ended_here);
  EXPECT_FALSE(d.at_boundary());
  ASSERT_TRUE(d.feed(std::string_view(frame).substr(10), out));
  EXPECT_TRUE(d.ended_here);
  EXPECT_EQ(d.found.size(), 1u);
  d.found.clear();
  ASSERT_TRUE(d.feed(server_text(kDone, false), out));
  EXPECT_TRUE(d.found.empty()) << "a fragment is not a whole message";
}

TEST(RelayDirection, AResponseThatEndsWithoutUsageOrTooLargeToReadStillEnds) {
  RelayDirection d(Sender::Server);
  d.reads_usage = true;
  std::string_view out;
  ASSERT_TRUE(
      d.feed(server_text(R"({"type":"response.done","response":{"status":"failed","usage":null}})"), out));
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_TRUE(d.found[0].ended) << "no usage to read, but the response is over";
  d.found.clear();  // (the relay takes what each read found)
  const std::string long_text(kInspectedFrameBytes, 'x');
  const std::string large =
      server_text(R"({"type": "response.done","response":{"output":")" + long_text + R"("}})");
  ASSERT_TRUE(d.feed(std::string_view(large).substr(0, 100), out));  // its first bytes...
  ASSERT_TRUE(d.feed(std::string_view(large).substr(100), out));     // ... and the rest
  ASSERT_EQ(d.found.size(), 1u);
  EXPECT_TRUE(d.found[0].ended) << "a frame too large to read is known by its first bytes";
  d.found.clear();
  const std::string audio = server_text(R"({"type":"response.audio.delta","delta":")" + long_text + R"("})");
  ASSERT_TRUE(d.feed(audio, out));
  EXPECT_TRUE(d.found.empty());
}

TEST(RelayDirection, BadFramingIsRefused) {
  RelayDirection d(Sender::Client);  // a client's frames must be masked
  std::string_view out;
  EXPECT_FALSE(d.feed(server_text("{}"), out));
}

TEST(SessionUsage, SumsTheResponsesAndTimesEachFromItsCreation) {
  SessionUsage u;
  const SessionUsage::TimePoint t0{};
  EXPECT_FALSE(u.learn({true, {}}, t0));
  const RealtimeUsage first{10, 5, "gpt-4o"};
  const auto took = u.learn({false, first}, t0 + std::chrono::milliseconds(250));
  ASSERT_TRUE(took);
  EXPECT_EQ(*took, std::chrono::milliseconds(250));
  EXPECT_FALSE(u.learn({false, RealtimeUsage{1, 2, "other"}}, t0 + std::chrono::seconds(1)))
      << "no response.created before this one";
  EXPECT_TRUE(u.seen());
  EXPECT_EQ(u.input_tokens(), 11);
  EXPECT_EQ(u.output_tokens(), 7);
  EXPECT_EQ(u.model(), "gpt-4o");
}

}  // namespace relay_direction_test
}  // namespace smartlb::websocket
