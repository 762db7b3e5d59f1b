#include "smartlb/http/event_stream_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb::http {
namespace event_stream_reader_test {  // named, not anonymous: tests/CMakeLists.txt

struct Seen {
  std::string raw, data, type;
  unsigned data_lines;
  friend bool operator==(const Seen&, const Seen&) = default;
};

// Records what the reader gives, and every byte in order (events' and passed ones).
struct Recorder final : EventSink {
  std::vector<Seen> events;
  std::string bytes;   // what went through: events' raw bytes and on_bytes, in order
  std::string passed;  // on_bytes only
  void on_event(const SseEvent& e) override {
    events.push_back({std::string(e.raw), std::string(e.data), std::string(e.type), e.data_lines});
    bytes.append(e.raw);
  }
  void on_bytes(std::string_view b) override {
    bytes.append(b);
    passed.append(b);
  }
};

Recorder read(std::string_view stream, std::size_t piece, std::size_t limit = 1 << 20) {
  EventStreamReader reader(limit);
  Recorder r;
  for (std::size_t at = 0; at < stream.size(); at += piece) reader.feed(stream.substr(at, piece), r);
  reader.finish(r);
  return r;
}

TEST(EventStreamReader, GivesEachEventWithItsDataAndType) {
  const Recorder r = read(": keep-alive\n\nevent: delta\ndata: {\"a\":1}\nid: 7\n\ndata: [DONE]\n\n", 1000);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0], (Seen{": keep-alive\n\n", "", "", 0}));
  EXPECT_EQ(r.events[1], (Seen{"event: delta\ndata: {\"a\":1}\nid: 7\n\n", "{\"a\":1}", "delta", 1}));
  EXPECT_EQ(r.events[2], (Seen{"data: [DONE]\n\n", "[DONE]", "", 1}));
  EXPECT_EQ(r.passed, "");
}

TEST(EventStreamReader, JoinsSeveralDataLinesAndReadsEveryLineEnding) {
  const Recorder r = read("data: {\"a\":\r\ndata:1}\rdata\n\r\nevent:error\r\ndata:x\r\r", 1000);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].data, "{\"a\":\n1}\n") << "no space after the colon kept; `data` alone is empty";
  EXPECT_EQ(r.events[0].data_lines, 3u);
  EXPECT_EQ(r.events[1].type, "error");
  EXPECT_EQ(r.events[1].data, "x");
}

TEST(EventStreamReader, TheSameEventsAndBytesHoweverTheStreamIsSplit) {
  const std::string stream =
      "event: response.created\r\ndata: {\"id\":\"resp_1\"}\r\n\r\n: comment\n\ndata: a\ndata: b\n\n"
      "data: {\"usage\":{\"prompt_tokens\":3}}\r\r" +
      std::string(300, 'x') + "\n\ndata: [DONE]\n\n";
  const Recorder whole = read(stream, stream.size(), 256);
  ASSERT_EQ(whole.events.size(), 5u);
  EXPECT_EQ(whole.bytes, stream) << "nothing lost, nothing added";
  EXPECT_EQ(whole.passed, std::string(300, 'x') + "\n\n") << "the event over the limit went as it came";
  // (An event's raw bytes may differ by the LF of a CRLF split after it: that LF goes on as
  // bytes, at once, rather than the event waiting for the next piece.)
  const auto contents = [](const Recorder& r) {
    std::vector<Seen> v = r.events;
    for (Seen& s : v) s.raw.clear();
    return v;
  };
  for (std::size_t piece = 1; piece < stream.size(); ++piece) {
    const Recorder split = read(stream, piece, 256);
    ASSERT_EQ(contents(split), contents(whole)) << "pieces of " << piece;
    ASSERT_EQ(split.bytes, stream) << "pieces of " << piece;
  }
}

TEST(EventStreamReader, AnEventWholeInItsPieceIsNotCopiedAndOneThatSpansPiecesIs) {
  EventStreamReader reader(1 << 20);
  Recorder r;
  for (int i = 0; i < 3; ++i) reader.feed("data: {\"choices\":[]}\n\n", r);
  EXPECT_EQ(reader.allocated_bytes(), 0u);
  reader.feed("data: {\"choices\":[]}\n", r);
  EXPECT_GT(reader.held_bytes(), 0u);
  reader.feed("\n", r);
  EXPECT_EQ(reader.allocated_bytes(), 0u) << "nothing kept once the event was given";
  EXPECT_EQ(r.events.size(), 4u);
}

TEST(EventStreamReader, HoldsNoMoreThanTheLimitAndReadsTheNextEventAgain) {
  EventStreamReader reader(64);
  Recorder r;
  reader.feed("data: " + std::string(40, 'a'), r);
  reader.feed(std::string(40, 'a') + "\n", r);
  EXPECT_TRUE(reader.overflowed());
  EXPECT_EQ(reader.held_bytes(), 0u);
  reader.feed("\ndata: 1\n\n", r);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].data, "1");
  EXPECT_EQ(r.passed, "data: " + std::string(80, 'a') + "\n\n");
}

TEST(EventStreamReader, TheLimitIsTheSameWhenACrlfIsSplit) {
  const std::string stream = "data: 123\r\n\ndata: 4\n\n";  // its first event: 11 bytes
  for (std::size_t piece = 1; piece < stream.size(); ++piece) {
    const Recorder r = read(stream, piece, 10);
    ASSERT_EQ(r.events.size(), 1u) << "pieces of " << piece;
    EXPECT_EQ(r.passed, "data: 123\r\n\n") << "pieces of " << piece;
  }
}

TEST(EventStreamReader, AnEventLeftOpenAtTheEndIsGivenByFinish) {
  EventStreamReader reader(1 << 20);
  Recorder r;
  reader.feed("data: 1\n\nevent: done\ndata: {\"x\":2}", r);
  ASSERT_EQ(r.events.size(), 1u);
  reader.finish(r);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1], (Seen{"event: done\ndata: {\"x\":2}", "{\"x\":2}", "done", 1}));
}

TEST(EventStreamReader, ALfAfterAnEventEndedByACrGoesOnAsBytes) {
  EventStreamReader reader(1 << 20);
  Recorder r;
  reader.feed("data: 1\r\n\r", r);
  ASSERT_EQ(r.events.size(), 1u);
  reader.feed("\ndata: 2\n\n", r);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.passed, "\n");
  EXPECT_EQ(r.bytes, "data: 1\r\n\r\ndata: 2\n\n");
}

TEST(EventField, SplitsAtTheFirstColonAndDropsOneSpace) {
  EXPECT_EQ(event_field("data:  a:b").value, " a:b");
  EXPECT_EQ(event_field("data").name, "data");
  EXPECT_EQ(event_field("data").value, "");
}

}  // namespace event_stream_reader_test
}  // namespace smartlb::http
