// An event stream's read buffer: cut to what an event needs once it is first empty, and left
// to grow for larger events after that.
#include <gtest/gtest.h>

#include <cstring>

#include "smartlb/net/event_stream_buffer.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {
namespace event_stream_buffer_test {  // named, not anonymous: tests/CMakeLists.txt

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

TEST(EventRooms, AWaitingStreamsRoomIsKeptForTheNextReaderWhichGetsOneLargeEnough) {
  EventRooms rooms;
  beast::flat_buffer waiting;
  waiting.reserve(kEventStreamBufferBytes);
  const void* storage = waiting.data().data();
  EXPECT_EQ(rooms.give(waiting), kEventStreamBufferBytes);
  EXPECT_EQ(waiting.capacity(), 0u) << "a waiting stream holds no room";
  EXPECT_EQ(rooms.kept(), 1u);

  beast::flat_buffer reader;
  rooms.take(reader, kEventStreamBufferBytes);
  EXPECT_EQ(reader.data().data(), storage) << "the kept room, not a new one";
  EXPECT_EQ(rooms.kept(), 0u);

  beast::flat_buffer small;
  small.reserve(kEventStreamBufferBytes);
  rooms.give(small);
  beast::flat_buffer large_reader;  // a stream of large events
  rooms.take(large_reader, 2 * kEventStreamBufferBytes);
  EXPECT_GE(large_reader.capacity(), 2 * kEventStreamBufferBytes);
  EXPECT_EQ(rooms.kept(), 1u) << "too small for it: left for another";
}

TEST(EventRooms, WhatIsKeptIsBounded) {
  EventRooms rooms;
  beast::flat_buffer huge;
  huge.reserve(EventRooms::kMaxKeptBytes + 1);
  rooms.give(huge);
  EXPECT_EQ(rooms.kept(), 0u) << "a room above the bound is freed";
  EXPECT_EQ(huge.capacity(), 0u);
  for (std::size_t i = 0; i < EventRooms::kMaxKept + 10; ++i) {
    beast::flat_buffer b;
    b.reserve(kEventStreamBufferBytes);
    rooms.give(b);
    EXPECT_EQ(b.capacity(), 0u);
  }
  EXPECT_EQ(rooms.kept(), EventRooms::kMaxKept);
}

}  // namespace event_stream_buffer_test
}  // namespace smartlb::net
