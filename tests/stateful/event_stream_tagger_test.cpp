#include "smartlb/stateful/event_stream_tagger.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb::stateful {
namespace event_stream_tagger_test {  // named, not anonymous: tests/CMakeLists.txt

const ResourceTag kTag = tag_from_bits(1);  // "-slbaaaaaaab"

// The stream fed in pieces of `step` bytes, then finished.
std::string tag_stream(std::string_view stream, std::size_t step, std::size_t limit = 1 << 20) {
  EventStreamTagger tagger(kTag, limit);
  std::string out;
  for (std::size_t at = 0; at < stream.size(); at += step) tagger.feed(stream.substr(at, step), out);
  tagger.finish(out);
  return out;
}

const std::string kStream =
    "event: response.created\n"
    "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n"
    "\n"
    ": a comment\n"
    "event: response.output_text.delta\n"
    "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"delta\":\"Hi\"}\n"
    "\n"
    "data: [DONE]\n"
    "\n";
const std::string kTagged =
    "event: response.created\n"
    "data: "
    "{\"type\":\"response.created\",\"response\":{\"id\":\"resp_1-slbaaaaaaab\",\"status\":\"in_progress\"}}"
    "\n"
    "\n"
    ": a comment\n"
    "event: response.output_text.delta\n"
    "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1-slbaaaaaaab\",\"delta\":\"Hi\"}\n"
    "\n"
    "data: [DONE]\n"
    "\n";

TEST(EventStreamTagger, TagsEachEventsDataWhateverTheReadBoundaries) {
  for (std::size_t step = 1; step <= kStream.size(); ++step)
    EXPECT_EQ(tag_stream(kStream, step), kTagged) << step;
}

TEST(EventStreamTagger, AnEventGoesOutWhenItsBlankLineArrivesNotBefore) {
  EventStreamTagger tagger(kTag);
  std::string out;
  tagger.feed("data: {\"id\":\"a\"}\n", out);
  EXPECT_EQ(out, "");
  EXPECT_EQ(tagger.held_bytes(), 17u);
  tagger.feed("\ndata: {\"id\"", out);
  EXPECT_EQ(out, "data: {\"id\":\"a-slbaaaaaaab\"}\n\n");
  tagger.feed(":\"b\"}\n\n", out);
  EXPECT_EQ(out, "data: {\"id\":\"a-slbaaaaaaab\"}\n\ndata: {\"id\":\"b-slbaaaaaaab\"}\n\n");
  EXPECT_EQ(tagger.held_bytes(), 0u);
}

TEST(EventStreamTagger, KeepsCrlfAndCrLineEndingsAndDataWithoutASpace) {
  const std::string crlf = "id: 7\r\ndata:{\"id\":\"a\"}\r\n\r\ndata: {\"id\":\"b\"}\r\r";
  const std::string want =
      "id: 7\r\ndata:{\"id\":\"a-slbaaaaaaab\"}\r\n\r\ndata: {\"id\":\"b-slbaaaaaaab\"}\r\r";
  for (std::size_t step = 1; step <= crlf.size(); ++step) EXPECT_EQ(tag_stream(crlf, step), want) << step;
}

TEST(EventStreamTagger, DataOverSeveralLinesIsOneJsonText) {
  const std::string multi = "data: {\"id\":\ndata:  \"a\",\ndata: \"n\":1}\n\n";
  EXPECT_EQ(tag_stream(multi, 3), "data: {\"id\":\ndata:  \"a-slbaaaaaaab\",\ndata: \"n\":1}\n\n");
}

TEST(EventStreamTagger, EventsWithoutJsonOrWithoutIdsAreUntouched) {
  const std::string plain =
      "event: ping\n\ndata: not json {\"id\":\"a\"}\n\ndata: {\"text\":\"x\"}\n\n: c\n\n";
  EXPECT_EQ(tag_stream(plain, 5), plain);
}

TEST(EventStreamTagger, AStreamThatEndsWithoutItsBlankLineIsStillTagged) {
  EXPECT_EQ(tag_stream("data: {\"id\":\"a\"}", 4), "data: {\"id\":\"a-slbaaaaaaab\"}");
  EXPECT_EQ(tag_stream("data: {\"id\":\"a\"}\n", 4), "data: {\"id\":\"a-slbaaaaaaab\"}\n");
  EXPECT_EQ(tag_stream("data: {\"id\":", 4), "data: {\"id\":") << "incomplete JSON goes as it is";
}

TEST(EventStreamTagger, AnEventOverTheLimitPassesAsItArrivesAndTheNextIsTaggedAgain) {
  const std::string big = "data: {\"id\":\"a\",\"text\":\"" + std::string(100, 'x') + "\"}\n\n";
  const std::string next = "data: {\"id\":\"b\"}\n\n";
  EventStreamTagger tagger(kTag, 64);
  std::string out;
  tagger.feed(big.substr(0, 80), out);
  EXPECT_EQ(out, big.substr(0, 80)) << "over the limit: passed on at once";
  EXPECT_EQ(tagger.held_bytes(), 0u);
  tagger.feed(big.substr(80) + next, out);
  tagger.finish(out);
  EXPECT_EQ(out, big + "data: {\"id\":\"b-slbaaaaaaab\"}\n\n");
  EXPECT_TRUE(tagger.overflowed());
}

TEST(EventStreamTagger, TheLimitDoesNotCountTheBlankLineWhereverAReadEnds) {
  const std::string event = "data: {\"id\":\"a\"}\r\n\r\n";  // 18 bytes before the blank line
  for (std::size_t step = 1; step <= event.size(); ++step) {
    EXPECT_EQ(tag_stream(event, step, 18), "data: {\"id\":\"a-slbaaaaaaab\"}\r\n\r\n") << step;
    EXPECT_EQ(tag_stream(event, step, 17), event) << step;
  }
}

}  // namespace event_stream_tagger_test
}  // namespace smartlb::stateful
