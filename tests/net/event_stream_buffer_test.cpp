// An event stream's read buffer: cut to what an event needs once it is first empty, and left
// to grow for larger events after that.
#include <gtest/gtest.h>

#include <cstring>

#include "smartlb/net/event_stream_buffer.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {
namespace {

// A connection's buffer as made: room for a response head and body.
beast::flat_buffer connection_buffer() {
  beast::flat_buffer b;
  b.reserve(UpstreamConnection::kBufferBytes);
  return b;
}

void put(beast::flat_buffer& b, std::size_t n) {
  std::memset(b.prepare(n).data(), 'x', n);
  b.commit(n);
}

TEST(FitToEvents, AnEmptyBufferIsCutToOneEventsRoom) {
  beast::flat_buffer b = connection_buffer();
  bool fitted = false;
  fit_to_events(b, fitted);
  EXPECT_TRUE(fitted);
  EXPECT_EQ(b.capacity(), kEventStreamBufferBytes);
}

TEST(FitToEvents, ABufferStillHoldingBytesIsLeftForLater) {
  beast::flat_buffer b = connection_buffer();
  put(b, 100);  // the rest of what came with the head
  bool fitted = false;
  fit_to_events(b, fitted);
  EXPECT_FALSE(fitted);
  EXPECT_EQ(b.capacity(), UpstreamConnection::kBufferBytes);
  EXPECT_EQ(b.size(), 100u);
  b.consume(100);
  fit_to_events(b, fitted);
  EXPECT_TRUE(fitted);
  EXPECT_EQ(b.capacity(), kEventStreamBufferBytes);
}

TEST(FitToEvents, RoomGrownForALargeEventStays) {
  beast::flat_buffer b = connection_buffer();
  bool fitted = false;
  fit_to_events(b, fitted);
  put(b, 5000);  // a large event
  b.consume(5000);
  const std::size_t grown = b.capacity();
  ASSERT_GE(grown, 5000u);
  fit_to_events(b, fitted);
  EXPECT_EQ(b.capacity(), grown) << "no allocation per large event";
}

TEST(FitToEvents, AFittedFlagLeavesABufferAlone) {
  beast::flat_buffer b = connection_buffer();
  bool fitted = true;  // not an event stream: relay_body starts it so
  fit_to_events(b, fitted);
  EXPECT_EQ(b.capacity(), UpstreamConnection::kBufferBytes);
}

}  // namespace
}  // namespace smartlb::net
